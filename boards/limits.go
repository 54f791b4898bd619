package boards

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/mcugen/mcugen/internal/fileio"
)

// Limits on what a board file may ask of the reader. Each is far above what a real board
// file needs (the built-in catalog is 20 KiB, its longest list has a dozen entries); they
// keep a hostile or generated file from making mcugen hang or exhaust memory, and each
// is refused with one error line naming the file.
const (
	// maxFileBytes bounds a board file's size.
	maxFileBytes = 1 << 20
	// maxNesting bounds how deep brackets nest.
	maxNesting = 100
	// maxStmtChain and maxFileChain bound the operators, calls, subscripts and
	// attribute selections of one top-level statement and of a whole file. The
	// parser's work on a statement grows with the square of its chain (buildtools
	// walks the left spine of a binary expression each time it extends it).
	maxStmtChain = 1000
	maxFileChain = 20000
	// maxStringBytes and maxListLen bound a string or list value, and maxBuiltBytes
	// the memory concatenation may allocate over a whole file ("billion laughs":
	// S1 = S0 + S0, S2 = S1 + S1, ...).
	maxStringBytes = 1 << 20
	maxListLen     = 10000
	maxBuiltBytes  = 64 << 20
	// maxDefs bounds the boards and families of one file.
	maxDefs = 4096
	// maxParents bounds the parents one definition names in inherits.
	maxParents = 64
	// Per-board lists, after inheritance.
	maxRegions = 64
	maxInit    = 256
	maxFlags   = 256 // cflags, features, qemu args
	// maxStackBytes bounds stack_bytes for boards without a data region (4 GiB); a
	// bare-metal board's stack must also fit its data region.
	maxStackBytes = 1 << 32
	// maxHz bounds clock frequencies (counter hz, uart clock_hz) and baud rates.
	maxHz = 100_000_000_000
	// maxICountShift is QEMU's largest -icount shift.
	maxICountShift = 10
)

// valueBytes is what one list element costs in memory, for maxBuiltBytes.
const valueBytes = int64(unsafe.Sizeof(value{}))

// readBoardFile reads a user's board file, refusing one larger than maxFileBytes (and
// never reading more than that from a device or pipe).
func readBoardFile(name string) ([]byte, error) {
	// A regular file of bounded size (fileio.ReadRegular): /dev/zero was
	// read without end, and a FIFO would block.
	data, err := fileio.ReadRegular(name, maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("boards: %s: %w", name, unwrapPath(err))
	}
	return data, nil
}

// unwrapPath drops an *os.PathError's own operation and path (the caller
// names the file).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func tooBig(name string) error {
	return fmt.Errorf("boards: %s: the board file is larger than %d MiB", name, maxFileBytes>>20)
}

// checkShape scans a board file before it is parsed and refuses shapes whose parse alone
// would take long: brackets nested deeper than maxNesting, and statements (or files) with
// more operators, calls, subscripts and selections than maxStmtChain (maxFileChain). It
// follows buildtools' lexer for strings, comments and line joining, and counts
// generously: a file that parses has at most as many of these as it counts.
func checkShape(file string, data []byte) error {
	if len(data) > maxFileBytes {
		return tooBig(file)
	}
	line, stmtLine := 1, 1
	depth, stmt, total := 0, 0, 0
	prev := byte(';') // the last significant byte: tells a call's ( from a bracket
	count := func(n int) error {
		stmt += n
		total += n
		if stmt > maxStmtChain {
			return errAt(pos{file, stmtLine}, "statement too complex: more than %d operators, calls and subscripts", maxStmtChain)
		}
		if total > maxFileChain {
			return errAt(pos{file, line}, "file too complex: more than %d operators, calls and subscripts", maxFileChain)
		}
		return nil
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '\n':
			line++
			if depth == 0 {
				stmt, stmtLine = 0, line
			}
			continue
		case c == '\\' && i+1 < len(data) && data[i+1] == '\n':
			i++ // a backslash joins the next line to this one
			line++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			continue
		case c == '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
			continue
		case c == '"' || c == '\'':
			i, line = skipString(data, i, line)
			c = '"'
		case c == '.' && (i+1 >= len(data) || !isDigit(data[i+1])):
			if err := count(1); err != nil {
				return err
			}
		case isWordByte(c):
			j := i
			for j < len(data) && (isWordByte(data[j]) || isDigit(c) && data[j] == '.') {
				j++
			}
			switch string(data[i:j]) {
			case "and", "or", "not", "in", "is", "if", "else", "for", "lambda":
				if err := count(1); err != nil {
					return err
				}
				c = '+' // an operator: a ( after it is no call
			default:
				c = 'a'
			}
			i = j - 1
		case c == '(' || c == '[' || c == '{':
			if isWordByte(prev) || prev == ')' || prev == ']' || prev == '}' || prev == '"' {
				if err := count(1); err != nil { // a call or subscript
					return err
				}
			}
			if depth++; depth > maxNesting {
				return errAt(pos{file, line}, "brackets nested more than %d deep", maxNesting)
			}
		case c == ')' || c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
		case c == ';':
			if depth == 0 {
				stmt, stmtLine = 0, line
			}
		default:
			// Operators: every character of a run counts (- - -x nests three unary
			// minuses), except a lone = (a keyword argument or assignment).
			j := i
			for j < len(data) && isOpByte(data[j]) {
				j++
			}
			if j > i {
				if n := j - i; n > 1 || c != '=' {
					if err := count(n); err != nil {
						return err
					}
				}
				i = j - 1
				c = '+'
			}
		}
		prev = c
	}
	return nil
}

// skipString returns the index of the last byte of the string literal that starts at
// data[i] and the line it ends on, as buildtools' lexer reads it (a backslash takes the
// next byte with it, even a newline; a one-quote string ends at any other newline, where
// the lexer fails).
func skipString(data []byte, i, line int) (int, int) {
	q := data[i]
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		run := 0
		for i += 3; i < len(data); i++ {
			switch data[i] {
			case q:
				if run++; run == 3 {
					return i, line
				}
				continue
			case '\\':
				if i+1 < len(data) && data[i+1] == '\n' {
					line++
				}
				i++
			case '\n':
				line++
			}
			run = 0
		}
		return len(data) - 1, line
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case q:
			return i, line
		case '\n':
			return i - 1, line
		case '\\':
			if i+1 < len(data) && data[i+1] == '\n' {
				line++
			}
			i++
		}
	}
	return len(data) - 1, line
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return c == '_' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isOpByte(c byte) bool {
	switch c {
	case '<', '>', '=', '!', '+', '-', '*', '/', '%', '|', '&', '~', '^', '@':
		return true
	}
	return false
}

package templates

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// cKeywords are C99's and C++'s reserved words (the Arduino wrapper is C++): an identifier
// equal to one gets a trailing underscore.
var cKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`auto break case char const continue default do double else
		enum extern float for goto if inline int long register restrict return short signed
		sizeof static struct switch typedef union unsigned void volatile while _Bool _Complex
		_Imaginary alignas alignof and asm bool catch class constexpr delete explicit export
		false friend mutable namespace new noexcept not nullptr operator or private protected
		public template this throw true try typeid typename using virtual wchar_t xor main`) {
		cKeywords[k] = true
	}
}

// Ident turns any text (a model file name, a tensor name) into a C identifier that is
// also a safe file name and a valid Arduino library and sketch name: ASCII letters,
// digits and underscores, not starting with a digit or an underscore, not a C or C++
// keyword. Letters with diacritics keep their base letter (é -> e); every other run of
// characters becomes one underscore. An empty result becomes "model".
func Ident(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		r = fold(r)
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
		default:
			under = true
		}
	}
	id := b.String()
	if id == "" {
		return "model"
	}
	if id[0] >= '0' && id[0] <= '9' {
		id = "m" + id
	}
	if cKeywords[id] {
		id += "_"
	}
	return id
}

// fold maps common Latin letters with diacritics to their base letter.
func fold(r rune) rune {
	const from = "àáâãäåçèéêëìíîïñòóôõöøùúûüýÿÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝ"
	const to = "aaaaaaceeeeiiiinoooooouuuuyyAAAAAACEEEEIIIINOOOOOOUUUUY"
	if r < 0xc0 {
		return r
	}
	i := 0
	for _, f := range from {
		if f == r {
			return rune(to[i])
		}
		i++
	}
	return r
}

// IsIdent reports whether s is a C identifier mcugen may use: [A-Za-z][A-Za-z0-9_]*, not
// a keyword.
func IsIdent(s string) bool {
	if s == "" || cKeywords[s] {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

// checkBase rejects a file name from a caller (emitc, crt) that is not one plain,
// portable file name.
func checkBase(what, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\:\x00") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("templates: %s file name %q is not a plain file name", what, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("templates: %s file name %q has character %q (allowed: letters, digits, _ - .)", what, name, c)
		}
	}
	return nil
}

// writeTree writes files (slash-separated relative paths) under dir. Every path must be
// local (no "..", not absolute), and the writes go through an os.Root, so a symbolic
// link already in dir cannot lead a write outside it either.
func writeTree(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		if !fs.ValidPath(n) || n == "." || path.Clean(n) != n {
			return fmt.Errorf("templates: refusing to write %q: not a clean relative path", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("templates: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("templates: %w", err)
	}
	defer root.Close()
	for _, n := range names {
		if d := path.Dir(n); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("templates: writing %s in %s: %w", n, dir, err)
			}
		}
		if err := root.WriteFile(n, files[n], 0o644); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return fmt.Errorf("templates: writing %s in %s: %v", n, dir, pe.Err)
			}
			return fmt.Errorf("templates: writing %s in %s: %w", n, dir, err)
		}
	}
	return nil
}

package memplan

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html"
	"strings"
)

// Table prints the plan as text: a summary line, then one row per buffer
// (tensor, size, offset, first, last) and one per scratch buffer.
func (p *Plan) Table() string {
	var sb strings.Builder
	order := "the model's order"
	if p.OrderSearched {
		order = "a searched order"
	}
	// Thousands separated, as compile and bench print sizes (a user journey).
	fmt.Fprintf(&sb, "arena %s B (activations %s B, scratch %s B), lower bound %s B, algorithm %s, %s, %d in place\n",
		commas(p.ArenaBytes), commas(p.ActivationBytes), commas(p.ScratchBytes), commas(p.LowerBoundBytes), p.Algorithm, order, len(p.InPlace))
	rows := [][]string{{"tensor", "size", "offset", "first", "last", "note"}}
	row := func(b Buffer, note string) {
		off := fmt.Sprint(b.Offset)
		if b.Offset < 0 {
			off = "-"
		}
		rows = append(rows, []string{shownName(b.Tensor), fmt.Sprint(b.Size), off, fmt.Sprint(b.First), fmt.Sprint(b.Last), note})
	}
	// The buffers that own bytes, by offset and last step: an in-place
	// output's input is the one at its offset that dies where it starts
	// (found by a scan of every buffer each, O(n²): review finding).
	dying := map[[2]int][]string{}
	for _, c := range p.Buffers {
		if c.AliasOf == "" {
			k := [2]int{c.Offset, c.Last}
			dying[k] = append(dying[k], c.Tensor)
		}
	}
	for _, b := range p.Buffers {
		note := ""
		switch {
		case b.AliasOf != "":
			note = "view of " + shownName(b.AliasOf)
		case b.Offset < 0:
			note = "outside the arena"
		case p.InPlace[b.Node]:
			note = "in place"
			// The input it overwrites: the buffer at its offset that dies where it starts.
			for _, c := range dying[[2]int{b.Offset, b.First}] {
				if c != b.Tensor {
					note = "in place, over " + shownName(c)
					break
				}
			}
		}
		row(b, note)
	}
	for _, b := range p.Scratch {
		row(b, "scratch")
	}
	width := make([]int, 5)
	for _, r := range rows {
		for i := range width {
			width[i] = max(width[i], len(r[i]))
		}
	}
	for _, r := range rows {
		line := fmt.Sprintf("%-*s  %*s  %*s  %*s  %*s  %s", width[0], r[0], width[1], r[1], width[2], r[2], width[3], r[3], width[4], r[4], r[5])
		sb.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return sb.String()
}

// shownName is a tensor's name for the table: TFLite joins the names of
// fused tensors with ';' (VWW's run to 240 characters), the first is kept.
func shownName(s string) string {
	if i := strings.IndexByte(s, ';'); i > 0 {
		return s[:i] + ";…"
	}
	return s
}

// SVG draws the plan: x is the step, y the offset (0 at the bottom), one
// labelled rectangle per buffer (scratch hatched), and dashed lines at the
// lower bound and at the arena size. Hovering a rectangle shows its details.
func (p *Plan) SVG() []byte {
	const (
		left, right, top, bottom = 100.0, 30.0, 64.0, 170.0
		plotW, plotH             = 1100.0, 620.0
	)
	steps := max(len(p.Order), 1)
	arena := max(p.ArenaBytes, p.LowerBoundBytes, 1)
	sx := plotW / float64(steps)
	sy := plotH / float64(arena)
	x := func(step int) float64 { return left + float64(step)*sx }
	y := func(off int) float64 { return top + plotH - float64(off)*sy }
	var b bytes.Buffer
	W, H := left+plotW+right, top+plotH+bottom
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", W, H, W, H)
	b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="2"/></pattern></defs>` + "\n")
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="white"/>`+"\n", W, H)
	title := p.Graph
	if title == "" {
		title = "memory plan"
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="22" font-size="15" font-weight="bold">%s: arena %s B (activations %s B, scratch %s B), lower bound %s B, %s</text>`+"\n",
		left, esc(title), commas(p.ArenaBytes), commas(p.ActivationBytes), commas(p.ScratchBytes), commas(p.LowerBoundBytes), esc(p.Algorithm))
	order := "the model's order"
	if p.OrderSearched {
		order = "a searched order"
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="42" fill="#444">%d steps in %s; %d nodes run in place (their output box continues the input's at the same offset); hatched = scratch; hover a box for its tensor</text>`+"\n",
		left, len(p.Order), order, len(p.InPlace))
	// Axes and grid.
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#444"/>`+"\n", left, top, plotW, plotH)
	tick := niceStep(arena, 8)
	for v := 0; v <= arena; v += tick {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left, y(v), left+plotW, y(v), left-6, y(v)+4, commas(v))
	}
	fmt.Fprintf(&b, `<text x="16" y="%.1f" transform="rotate(-90 16 %.1f)" text-anchor="middle">offset (bytes)</text>`+"\n", top+plotH/2, top+plotH/2)
	every := max(1, int(14/sx)+1)
	for s := 0; s < steps; s += every {
		cx := x(s) + sx/2
		name := ""
		if s < len(p.stepNames) {
			name = shorten(shortName(p.stepNames[s]), 24)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" transform="rotate(-60 %.1f %.1f)">%d %s</text>`+"\n",
			cx, top+plotH+12, cx, top+plotH+12, s, esc(name))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">step (node in execution order)</text>`+"\n", left+plotW/2, H-6)
	// Buffers.
	draw := func(buf Buffer, fill, label string) {
		if buf.Size == 0 || buf.Offset < 0 {
			return
		}
		x0, x1 := x(buf.First), x(buf.Last+1)
		y0, y1 := y(buf.Offset+buf.Size), y(buf.Offset)
		fmt.Fprintf(&b, `<g><title>%s: %s B at offset %s, steps %d..%d</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="#222" stroke-width="0.6"/>`,
			esc(buf.Tensor), commas(buf.Size), commas(buf.Offset), buf.First, buf.Last, x0, y0, x1-x0, y1-y0, fill)
		w, h := x1-x0, y1-y0
		fits := func(w, h float64) (float64, int) {
			fs := min(11.0, h*0.8)
			return fs, int(w / (fs * 0.62))
		}
		fs, n := fits(w, h)
		vfs, vn := fits(h, w)
		vertical := vn > n && vfs >= 6
		if vertical {
			fs, n = vfs, vn
		}
		if fs >= 6 && n >= 4 {
			cx, cy := (x0+x1)/2, (y0+y1)/2
			rot := ""
			if vertical {
				rot = fmt.Sprintf(` transform="rotate(-90 %.1f %.1f)"`, cx, cy)
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%.1f" text-anchor="middle" dominant-baseline="middle"%s>%s</text>`,
				cx, cy, fs, rot, esc(shorten(label, n)))
		}
		b.WriteString("</g>\n")
	}
	for _, buf := range p.Buffers {
		if buf.AliasOf != "" {
			continue
		}
		draw(buf, color(buf.Tensor), fmt.Sprintf("%s %s", shortName(buf.Tensor), kb(buf.Size)))
	}
	for _, buf := range p.Scratch {
		draw(buf, "url(#hatch)", "scratch "+kb(buf.Size))
	}
	line := func(v int, colour, label string) {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"/><text x="%.1f" y="%.1f" text-anchor="end" fill="%s">%s</text>`+"\n",
			left, y(v), left+plotW, y(v), colour, left+plotW-4, y(v)-4, colour, esc(label))
	}
	lbLabel := "lower bound " + commas(p.LowerBoundBytes) + " B"
	if p.ArenaBytes == p.LowerBoundBytes {
		lbLabel += " = arena"
	}
	line(p.LowerBoundBytes, "#c00", lbLabel)
	if p.ArenaBytes != p.LowerBoundBytes {
		line(p.ArenaBytes, "#06c", "arena "+commas(p.ArenaBytes)+" B")
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// shortName makes a converter's tensor name readable in a picture:
// "model/activation_3/Relu;model/batch_normalization_3/..." becomes
// "activation_3/Relu".
func shortName(s string) string {
	if i := strings.IndexByte(s, ';'); i > 0 {
		s = s[:i]
	}
	if parts := strings.Split(s, "/"); len(parts) > 2 {
		s = strings.Join(parts[len(parts)-2:], "/")
	}
	return s
}

func esc(s string) string { return html.EscapeString(s) }

func shorten(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	if n <= 3 {
		return s[:n]
	}
	return s[:n-1] + "…"
}

// color is a light colour chosen from the tensor name (stable across runs).
func color(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	return fmt.Sprintf("hsl(%d,%d%%,%d%%)", v%360, 55+int(v>>9)%25, 72+int(v>>17)%12)
}

func kb(n int) string {
	if n >= 1024 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%d B", n)
}

func commas(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var parts []string
	for len(s) > 3 {
		parts = append([]string{s[len(s)-3:]}, parts...)
		s = s[:len(s)-3]
	}
	parts = append([]string{s}, parts...)
	out := strings.Join(parts, ",")
	if neg {
		out = "-" + out
	}
	return out
}

// niceStep is a round tick step (1, 2 or 5 times a power of ten) giving at
// most about n ticks over [0, span].
func niceStep(span, n int) int {
	for _, p := range []int{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000} {
		for _, m := range []int{1, 2, 5} {
			if s := m * p; span/s <= n {
				return s
			}
		}
	}
	return max(span/n, 1)
}

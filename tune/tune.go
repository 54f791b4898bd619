// Package tune is mcugen's autotuner core: what a kernel is for tuning
// purposes (its signature: op, shapes, dtypes, attributes, target and core),
// which schedule knobs it has and which values each may take (its space), how
// candidates are chosen (exhaustive for small spaces, simulated annealing
// guided by a ridge-regression cost model otherwise), and the tuning records
// that keep the best knobs per kernel signature and core as JSON.
//
// It is a package of its own because both sides of tuning need it without
// needing each other: the pipeline applies records when it lowers a model
// (`compile --tuning records.json`), and tune/measure builds and runs the
// candidates through the pipeline. It imports only graph and tir, so the
// pipeline can import it; the measuring side lives in tune/measure.
package tune

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// Signature names a kernel for tuning: two graph nodes with the same
// signature lower to the same loop nest (up to constant values), so they
// share one record. It reads "op dtype in->out #attrs" where in lists every
// input (c marks a constant, p a per-channel quantized one) and attrs is a
// hash of the node's attributes (strides, padding, activation, ...).
func Signature(g *graph.Graph, n *graph.Node) string {
	var b strings.Builder
	b.WriteString(string(n.Op))
	dt := "?"
	if t := g.In(n, 0); t != nil {
		dt = t.DType.String()
	}
	b.WriteString(" " + dt + " ")
	for i, name := range n.Inputs {
		if i > 0 {
			b.WriteByte(',')
		}
		t := g.Tensor(name)
		if t == nil {
			b.WriteString("-")
			continue
		}
		if t.IsConst() {
			b.WriteByte('c')
		}
		if t.Quant.PerAxis() {
			b.WriteByte('p')
		}
		b.WriteString(dims(t.Shape))
		if t.DType.String() != dt {
			b.WriteString(":" + t.DType.String())
		}
	}
	b.WriteString("->")
	for i, name := range n.Outputs {
		if i > 0 {
			b.WriteByte(',')
		}
		if t := g.Tensor(name); t != nil {
			b.WriteString(dims(t.Shape))
			if t.DType.String() != dt {
				b.WriteString(":" + t.DType.String())
			}
		}
	}
	h := fnv.New32a()
	if a, ok := n.Attrs.(*graph.Conv2DAttrs); ok && a != nil {
		// The attributes as they printed before ZeroTaps, so that the
		// records of every other convolution keep their signatures.
		c := *a
		c.ZeroTaps = 0
		fmt.Fprint(h, strings.Replace(fmt.Sprintf("%+v", &c), " ZeroTaps:0", "", 1))
		if a.ZeroTaps != 0 {
			fmt.Fprintf(h, " ZeroTaps:%d", a.ZeroTaps)
		}
	} else if n.Attrs != nil {
		fmt.Fprintf(h, "%+v", n.Attrs)
	}
	fmt.Fprintf(&b, " #%08x", h.Sum32())
	return b.String()
}

func dims(s []int) string {
	if len(s) == 0 {
		return "scalar"
	}
	p := make([]string, len(s))
	for i, d := range s {
		p[i] = strconv.Itoa(d)
	}
	return strings.Join(p, "x")
}

// Knobs is one setting of a kernel's knobs.
type Knobs map[string]int

// String prints knobs sorted by name: "block_oc=4 block_px=2".
func (k Knobs) String() string {
	keys := slices.Sorted(maps.Keys(k))
	p := make([]string, len(keys))
	for i, n := range keys {
		p[i] = fmt.Sprintf("%s=%d", n, k[n])
	}
	return strings.Join(p, " ")
}

// Clone copies k.
func (k Knobs) Clone() Knobs { return maps.Clone(k) }

// Dim is one knob and the values it may take.
type Dim struct {
	Name   string
	Values []int
	// Algorithm marks a knob that switches the kernel to another algorithm
	// (tir.DeclareAlgorithm): the search measures each of its values early.
	Algorithm bool
}

// Space is the product of a kernel's knob dimensions, in name order.
type Space struct {
	Dims []Dim
	// Fixed are knobs with one value: part of every point, no dimension.
	Fixed Knobs
}

// Size is the number of points in the space (capped at 1<<40).
func (s Space) Size() int {
	n := 1
	for _, d := range s.Dims {
		n *= len(d.Values)
		if n > 1<<40 {
			return 1 << 40
		}
	}
	return n
}

// At returns point i (mixed radix over the dims, first dim fastest).
func (s Space) At(i int) Knobs {
	k := Knobs{}
	maps.Copy(k, s.Fixed)
	for _, d := range s.Dims {
		k[d.Name] = d.Values[i%len(d.Values)]
		i /= len(d.Values)
	}
	return k
}

// Index is the inverse of At (-1 when k is not in the space).
func (s Space) Index(k Knobs) int {
	idx, mul := 0, 1
	for _, d := range s.Dims {
		j := slices.Index(d.Values, k[d.Name])
		if j < 0 {
			return -1
		}
		idx += j * mul
		mul *= len(d.Values)
	}
	return idx
}

// knownValues are the value sets of the knobs the schedules in tir read, as
// their doc comments describe them ("target.knob" for a knob that means
// something else in that target's schedules). A target can declare its own
// with tir.DeclareKnob; unknown knobs get a set chosen from their name and
// default (see ValuesFor).
var knownValues = map[string][]int{
	"dsp.unroll_k":  {1, 2},
	"partition":     {0, 1},
	"tensorize_dot": {0, 1},
	"unroll_ic":     {0, 2, 4, 8},
	"unroll_kw":     {0, 3, 5},
	"unroll_k":      {0, 2, 4, 8, 16},
	"block_px":      {1, 2},
	"block_oc":      {1, 2, 4},
	"block_rows":    {1, 2},
	"im2col":        {0, 1},
	"unroll_taps":   {0, 1},
}

// ValuesFor is the value set tried for knob name of target whose default is
// def: the declaration (tir.KnobValues of "target.name", then of name) if
// any, else the table of known knobs, else by name: unroll/split factors {0,1,2,4,8}, block sizes
// {1,2,4}, flags {0,1}, and otherwise the default with its half and double.
// The default is always in the set.
func ValuesFor(target, name string, def int) []int { return valuesFor(target, "", name, def) }

// valuesFor is ValuesFor for a kernel of op, whose schedule may declare a
// narrower set ("dsp.depthwise_conv2d.block_px": the depthwise schedule
// has no three-pixel block, and a trial of it measured the generic
// fallback).
func valuesFor(target, op, name string, def int) []int {
	var v []int
	switch {
	case op != "" && len(tir.KnobValues(target+"."+op+"."+name)) > 0:
		v = tir.KnobValues(target + "." + op + "." + name)
	case len(tir.KnobValues(target+"."+name)) > 0:
		v = tir.KnobValues(target + "." + name)
	case len(tir.KnobValues(name)) > 0:
		v = tir.KnobValues(name)
	case knownValues[target+"."+name] != nil:
		v = knownValues[target+"."+name]
	case knownValues[name] != nil:
		v = knownValues[name]
	case strings.Contains(name, "unroll") || strings.Contains(name, "split"):
		v = []int{0, 1, 2, 4, 8}
	case strings.Contains(name, "block") || strings.Contains(name, "tile") || strings.Contains(name, "vec"):
		v = []int{1, 2, 4}
	case def == 0 || def == 1:
		v = []int{0, 1}
	default:
		v = []int{max(def/2, 1), def * 2}
	}
	v = append(slices.Clone(v), def)
	sort.Ints(v)
	return slices.Compact(v)
}

// Values is the value set of knob name in s: its dimension's values, or its
// fixed value alone; nil when s has no such knob.
func (s Space) Values(name string) []int {
	for _, d := range s.Dims {
		if d.Name == name {
			return slices.Clone(d.Values)
		}
	}
	if v, ok := s.Fixed[name]; ok {
		return []int{v}
	}
	return nil
}

// Lean is the setting of a kernel whose weights the fit pass keeps int8 in
// flash (for the board's flash or a budget): the tuner tunes such a kernel
// with it held fixed (measure.Kernels), so its record holds it whatever the
// schedule's default.
var Lean = Knobs{"weights": 8}

// Fix returns s with knob name held at v: no dimension, in every point.
func (s Space) Fix(name string, v int) Space {
	out := Space{Fixed: Knobs{}}
	maps.Copy(out.Fixed, s.Fixed)
	out.Fixed[name] = v
	for _, d := range s.Dims {
		if d.Name != name {
			out.Dims = append(out.Dims, d)
		}
	}
	return out
}

// SpaceFor builds the space of a kernel scheduled for target from the knobs
// its schedule read (PrimFunc.Knobs after scheduling holds every knob with
// its value). A knob declared with its default alone (dsp.weights: a flash
// choice the pipeline makes, not a speed one) is no dimension: the search
// leaves it at the default (Space.Fixed, in every point).
//
// op is the kernel's (PrimFunc.Op): a schedule's own value set for a knob
// of that op comes first (valuesFor); "" for none.
func SpaceFor(target, op string, defaults Knobs) Space {
	var s Space
	for _, name := range slices.Sorted(maps.Keys(defaults)) {
		v := valuesFor(target, op, name, defaults[name])
		if len(v) < 2 {
			if s.Fixed == nil {
				s.Fixed = Knobs{}
			}
			s.Fixed[name] = v[0]
			continue
		}
		s.Dims = append(s.Dims, Dim{Name: name, Values: v,
			Algorithm: tir.IsAlgorithm(target+"."+name) || tir.IsAlgorithm(name)})
	}
	return s
}

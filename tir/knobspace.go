package tir

import "slices"

// knobSpace holds the value sets schedules declare for their knobs, read by
// the autotuner (package tune) to know what to try.
var knobSpace = map[string][]int{}

// DeclareKnob says which values knob name may take in the schedules that read
// it (e.g. DeclareKnob("block_oc", 1, 2, 4) from a target's init, or
// DeclareKnob("dsp.unroll_k", 1, 2) for one target's meaning of it). The
// autotuner tries exactly these; undeclared knobs get a guess from their name.
func DeclareKnob(name string, values ...int) { knobSpace[name] = slices.Clone(values) }

// KnobValues returns the declared values of a knob (nil if undeclared).
func KnobValues(name string) []int { return slices.Clone(knobSpace[name]) }

// algorithms are the knobs that switch a kernel to another algorithm (not a
// variation of one): the autotuner measures each of their values early,
// whatever the rest of the space.
var algorithms = map[string]bool{}

// DeclareAlgorithm marks a declared knob as an algorithm switch.
func DeclareAlgorithm(name string) { algorithms[name] = true }

// IsAlgorithm reports whether DeclareAlgorithm marked the knob.
func IsAlgorithm(name string) bool { return algorithms[name] }

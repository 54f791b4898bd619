package tune

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Search chooses which candidates of one kernel to measure. A space no
// larger than the budget is measured exhaustively; a larger one starts from
// the defaults and a few random points, then each round anneals over the
// cost model's predictions from the best points so far and proposes the
// most promising unmeasured ones (a fifth of them random, to keep exploring).
// The model is refitted after every measurement.
type Search struct {
	Space    Space
	Budget   int
	Measured map[int]int64 // index → instructions; -1 for a failed candidate
	Model    *Model
	// CopyAllowance bounds the free copies (ReportCopy), as a multiple of
	// the budget: each still costs a compile (NewSearch: 3).
	CopyAllowance int

	def     int
	rng     *rand.Rand
	pending map[int]bool
	// copies are measured points whose code was a measured point's
	// (ReportCopy): up to CopyAllowance times the budget they take none
	// of it.
	copies int
}

// NewSearch starts a search over space from the default knobs with a budget
// of measurements; seed makes it repeatable.
func NewSearch(space Space, defaults Knobs, budget int, seed uint64) *Search {
	if budget < 1 {
		budget = 1
	}
	s := &Search{Space: space, Budget: budget, Measured: map[int]int64{}, Model: NewModel(space), CopyAllowance: 3,
		def: space.Index(defaults), rng: rand.New(rand.NewPCG(seed, 0x74756e65)), pending: map[int]bool{}}
	if s.def < 0 {
		s.def = 0
	}
	return s
}

// Exhaustive reports whether every point will be measured.
func (s *Search) Exhaustive() bool { return s.Space.Size() <= s.Budget }

// Kind is "exhaustive" or "anneal".
func (s *Search) Kind() string {
	if s.Exhaustive() {
		return "exhaustive"
	}
	return "anneal"
}

func (s *Search) used() int { return len(s.Measured) + len(s.pending) - s.free() }

// free is how many measured points took none of the budget.
func (s *Search) free() int { return min(s.copies, s.CopyAllowance*s.Budget) }

// Spent is how much of the search is done, in points: every point known
// for an exhaustive search (copies too), else the budget spent (copies
// up to the allowance are free), at most the search's size.
func (s *Search) Spent() int {
	n := len(s.Measured)
	if !s.Exhaustive() {
		n -= s.free()
	}
	return min(n, s.Budget, s.Space.Size())
}

// Copies is how many points had the code of a point measured before
// (ReportCopy): known without a run of their own.
func (s *Search) Copies() int { return s.copies }

// Runs is how many points were measured by a run of their own.
func (s *Search) Runs() int { return len(s.Measured) - s.copies }

func (s *Search) known(i int) bool {
	_, ok := s.Measured[i]
	return ok || s.pending[i]
}

// Next proposes up to n candidates to measure (none when the search is done).
func (s *Search) Next(n int) []Knobs {
	n = min(n, s.Budget-s.used(), s.Space.Size()-len(s.Measured)-len(s.pending))
	if n <= 0 {
		return nil
	}
	var idx []int
	add := func(i int) {
		if len(idx) < n && !s.known(i) && !slices.Contains(idx, i) {
			idx = append(idx, i)
		}
	}
	add(s.def)
	// Each other value of an algorithm knob, the rest at the defaults: a
	// different algorithm is too far from the default for the annealing to
	// be sure to reach it within the budget.
	for _, d := range s.Space.Dims {
		if !d.Algorithm {
			continue
		}
		for _, v := range d.Values {
			k := s.Space.At(s.def)
			if k[d.Name] != v {
				k[d.Name] = v
				add(s.Space.Index(k))
			}
		}
	}
	if s.Exhaustive() {
		for i := 0; i < s.Space.Size() && len(idx) < n; i++ {
			add(i)
		}
	} else {
		warm := min(s.Budget/3, 2+len(s.Space.Dims))
		for tries := 0; s.used()+len(idx) < warm && len(idx) < n && tries < 1000; tries++ {
			add(s.rng.IntN(s.Space.Size()))
		}
		for tries := 0; len(idx) < n && tries < 8*n+20; tries++ {
			if s.rng.IntN(5) == 0 {
				add(s.rng.IntN(s.Space.Size()))
				continue
			}
			add(s.anneal(idx))
		}
		for tries := 0; len(idx) < n && tries < 1000; tries++ {
			add(s.rng.IntN(s.Space.Size()))
		}
	}
	for _, i := range idx {
		s.pending[i] = true
	}
	out := make([]Knobs, len(idx))
	for j, i := range idx {
		out[j] = s.Space.At(i)
	}
	return out
}

// anneal runs simulated annealing on the model's predictions, starting at a
// good measured point, moving one knob at a time, and returns the best
// unmeasured point it visited (or a random one).
func (s *Search) anneal(taken []int) int {
	cur := s.startPoint()
	curE := s.energy(cur)
	best, bestE := -1, math.Inf(1)
	T := 0.1
	for step := 0; step < 200; step++ {
		nxt := s.neighbor(cur)
		e := s.energy(nxt)
		if e < curE || s.rng.Float64() < math.Exp((curE-e)/T) {
			cur, curE = nxt, e
		}
		if !s.known(cur) && !slices.Contains(taken, cur) && curE < bestE {
			best, bestE = cur, curE
		}
		T *= 0.97
	}
	if best < 0 {
		return s.rng.IntN(s.Space.Size())
	}
	return best
}

func (s *Search) energy(i int) float64 {
	p := s.Model.Predict(i)
	if p <= 0 {
		return 0
	}
	if v, ok := s.Measured[i]; ok && v < 0 {
		return math.Inf(1)
	}
	return math.Log(p)
}

func (s *Search) startPoint() int {
	type pt struct {
		i int
		v int64
	}
	var good []pt
	for i, v := range s.Measured {
		if v > 0 {
			good = append(good, pt{i, v})
		}
	}
	if len(good) == 0 {
		return s.def
	}
	sort.Slice(good, func(a, b int) bool { return good[a].v < good[b].v || good[a].v == good[b].v && good[a].i < good[b].i })
	return good[s.rng.IntN(min(3, len(good)))].i
}

func (s *Search) neighbor(i int) int {
	k := s.Space.At(i)
	d := s.Space.Dims[s.rng.IntN(len(s.Space.Dims))]
	if len(d.Values) > 1 {
		v := d.Values[s.rng.IntN(len(d.Values))]
		for v == k[d.Name] {
			v = d.Values[s.rng.IntN(len(d.Values))]
		}
		k[d.Name] = v
	}
	return s.Space.Index(k)
}

// Report records a measurement (ok=false: the candidate failed to build,
// ran wrong or timed out) and refits the model.
func (s *Search) Report(k Knobs, instructions int64, ok bool) {
	i := s.Space.Index(k)
	if i < 0 {
		return
	}
	delete(s.pending, i)
	if !ok {
		instructions = -1
	}
	s.Measured[i] = instructions
	_ = s.Model.Fit(s.Measured)
}

// ReportCopy records a candidate whose generated code is that of one
// measured before, with its count: knobs that do not change the code (a
// float kernel's requantization knob, skip_dead without dead channels)
// cost a compile, not a run, and take none of the budget (tuning journey
// finding: a quarter to nearly half of --trials measured programs
// already measured).
func (s *Search) ReportCopy(k Knobs, instructions int64, ok bool) {
	i := s.Space.Index(k)
	if i < 0 {
		return
	}
	if _, seen := s.Measured[i]; !seen {
		s.copies++
	}
	s.Report(k, instructions, ok)
}

// Best returns the best measured candidate (ok=false when none succeeded).
// Ties go to the default, then to the lowest index.
func (s *Search) Best() (Knobs, int64, bool) {
	bi, bv := -1, int64(math.MaxInt64)
	for i, v := range s.Measured {
		if v > 0 && (v < bv || v == bv && (i == s.def || bi != s.def && i < bi)) {
			bi, bv = i, v
		}
	}
	if bi < 0 {
		return nil, 0, false
	}
	return s.Space.At(bi), bv, true
}

// Default returns the measured count of the default knobs (0 if not measured).
func (s *Search) Default() int64 { return max(s.Measured[s.def], 0) }

// ModelHit tells whether the cost model picks the true best out of
// sample: fitted on a random half of the measured points, it must pick the
// best of all of them (for a search that was not exhaustive, the best
// found). Fitted on every point, as the search's model is, it was judged on
// the points it had fitted, which flattered it (session 57's review: 18 of
// 35 kernels in-sample, about 8 of 19 real searches refitted by hand). It
// returns false, false when there is too little to judge (fewer than 4
// good points).
func (s *Search) ModelHit() (hit, judged bool) {
	var pts []int
	for i, v := range s.Measured {
		if v > 0 {
			pts = append(pts, i)
		}
	}
	if len(pts) < 4 {
		return false, false
	}
	sort.Ints(pts)
	train := map[int]int64{}
	r := rand.New(rand.NewPCG(uint64(len(pts)), 7))
	perm := r.Perm(len(pts))
	for _, j := range perm[:(len(pts)+1)/2] {
		train[pts[j]] = s.Measured[pts[j]]
	}
	m := NewModel(s.Space)
	if m.Fit(train) != nil {
		return false, false
	}
	pick, pv := -1, math.Inf(1)
	for _, i := range pts {
		if p := m.Predict(i); p < pv {
			pick, pv = i, p
		}
	}
	_, best, _ := s.Best()
	return s.Measured[pick] == best, true
}

// Done reports whether the search has measured all it will.
func (s *Search) Done() bool {
	return len(s.pending) == 0 && (len(s.Measured) >= s.Space.Size() || len(s.Measured)-s.free() >= s.Budget)
}

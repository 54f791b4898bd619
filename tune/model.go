package tune

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Model is a cost model over one space: ridge regression of the log of the
// instruction count on one-hot knob features (one column per knob value,
// plus an intercept), fitted with gonum. It is refitted as measurements
// arrive and ranks the candidates not yet measured.
type Model struct {
	space  Space
	offset []int // first column of each dim
	cols   int
	w      []float64
	Lambda float64
}

// NewModel returns an unfitted model for space (it predicts 0 everywhere).
func NewModel(space Space) *Model {
	m := &Model{space: space, Lambda: 0.1}
	m.cols = 1
	for _, d := range space.Dims {
		m.offset = append(m.offset, m.cols)
		m.cols += len(d.Values)
	}
	return m
}

func (m *Model) features(idx int, row []float64) {
	for i := range row {
		row[i] = 0
	}
	row[0] = 1
	for j, d := range m.space.Dims {
		row[m.offset[j]+idx%len(d.Values)] = 1
		idx /= len(d.Values)
	}
}

// Fit solves (XᵀX + λI) w = Xᵀ y over the measured points (index into the
// space → instructions). Points with a non-positive count are left out.
func (m *Model) Fit(points map[int]int64) error {
	var idx []int
	var y []float64
	for i, v := range points {
		if v > 0 {
			idx = append(idx, i)
			y = append(y, math.Log(float64(v)))
		}
	}
	if len(idx) == 0 {
		m.w = nil
		return nil
	}
	// The intercept starts at the mean so λ shrinks the knob effects only.
	mean := 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	X := mat.NewDense(len(idx), m.cols, nil)
	row := make([]float64, m.cols)
	for r, i := range idx {
		m.features(i, row)
		X.SetRow(r, row)
		y[r] -= mean
	}
	var A mat.Dense
	A.Mul(X.T(), X)
	for c := 1; c < m.cols; c++ {
		A.Set(c, c, A.At(c, c)+m.Lambda)
	}
	A.Set(0, 0, A.At(0, 0)+1e-9)
	var b mat.VecDense
	b.MulVec(X.T(), mat.NewVecDense(len(y), y))
	var w mat.VecDense
	if err := w.SolveVec(&A, &b); err != nil {
		return err
	}
	m.w = make([]float64, m.cols)
	for c := range m.w {
		m.w[c] = w.AtVec(c)
	}
	m.w[0] += mean
	return nil
}

// Predict returns the predicted instruction count at a point of the space
// (0 before the first fit).
func (m *Model) Predict(idx int) float64 {
	if m.w == nil {
		return 0
	}
	row := make([]float64, m.cols)
	m.features(idx, row)
	s := 0.0
	for c, v := range row {
		s += v * m.w[c]
	}
	return math.Exp(s)
}

package interp

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func TestConv2DHandWorked(t *testing.T) {
	tests := []struct {
		name  string
		attrs *graph.Conv2DAttrs
		x, w  *graph.Data
		b     *graph.Data
		out   []int
		want  []float32
	}{
		{"valid 2x2", &graph.Conv2DAttrs{}, fd([]int{1, 3, 3, 1}, seq(9)...), fd([]int{1, 2, 2, 1}, 1, 2, 3, 4), nil,
			[]int{1, 2, 2, 1}, []float32{37, 47, 67, 77}},
		{"bias and relu", &graph.Conv2DAttrs{Act: graph.ActRelu}, fd([]int{1, 3, 3, 1}, seq(9)...), fd([]int{2, 1, 1, 1}, 1, -1), fd([]int{2}, 0.5, 3),
			[]int{1, 3, 3, 2}, []float32{1.5, 2, 2.5, 1, 3.5, 0, 4.5, 0, 5.5, 0, 6.5, 0, 7.5, 0, 8.5, 0, 9.5, 0}},
		// padded input rows: [0 0 0] [1 2 0] [3 4 0]
		{"asymmetric padding", &graph.Conv2DAttrs{Pad: graph.Padding{Top: 1, Right: 1}}, fd([]int{1, 2, 2, 1}, 1, 2, 3, 4), fd([]int{1, 2, 2, 1}, 1, 1, 1, 1), nil,
			[]int{1, 2, 2, 1}, []float32{3, 2, 10, 6}},
		{"dilation 2", &graph.Conv2DAttrs{Dilation: [2]int{2, 2}}, fd([]int{1, 3, 3, 1}, seq(9)...), fd([]int{1, 2, 2, 1}, 1, 1, 1, 1), nil,
			[]int{1, 1, 1, 1}, []float32{20}},
		{"stride 2 pad 1", &graph.Conv2DAttrs{Stride: [2]int{2, 2}, Pad: padding(1, 1, 1, 1)}, fd([]int{1, 3, 3, 1}, seq(9)...), fd([]int{1, 3, 3, 1}, 1, 1, 1, 1, 1, 1, 1, 1, 1), nil,
			[]int{1, 2, 2, 1}, []float32{12, 16, 24, 28}},
		{"depthwise multiplier 2", &graph.Conv2DAttrs{Group: 2}, fd([]int{1, 1, 1, 2}, 1, 2), fd([]int{4, 1, 1, 1}, 1, 2, 3, 4), nil,
			[]int{1, 1, 1, 4}, []float32{1, 2, 6, 8}},
		{"grouped", &graph.Conv2DAttrs{Group: 2}, fd([]int{1, 1, 1, 4}, 1, 2, 3, 4), fd([]int{2, 1, 1, 2}, 1, 1, 1, -1), nil,
			[]int{1, 1, 1, 2}, []float32{3, -1}},
		{"relu6", &graph.Conv2DAttrs{Act: graph.ActRelu6}, fd([]int{1, 1, 1, 2}, 3, 4), fd([]int{3, 1, 1, 2}, 1, 1, -1, 0, 0.5, 0.25), nil,
			[]int{1, 1, 1, 3}, []float32{6, 0, 2.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRun(t, graph.Conv2D, tc.attrs, tc.out, tc.x, tc.w, tc.b)
			closeTo(t, got.F, tc.want)
		})
	}
}

// naiveConv is an independent NCHW formulation: it pads the input
// explicitly, then correlates group by group.
func naiveConv(x, w, b *graph.Data, a graph.Conv2DAttrs) ([]int, []float32) {
	N, H, W, C := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	M, KH, KW, CG := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	p := a.Pad
	PH, PW := H+p.Top+p.Bottom, W+p.Left+p.Right
	padded := make([]float64, N*C*PH*PW) // NCHW
	at := func(n, c, y, x int) int { return ((n*C+c)*PH+y)*PW + x }
	for n := 0; n < N; n++ {
		for y := 0; y < H; y++ {
			for xx := 0; xx < W; xx++ {
				for c := 0; c < C; c++ {
					padded[at(n, c, y+p.Top, xx+p.Left)] = float64(x.F[((n*H+y)*W+xx)*C+c])
				}
			}
		}
	}
	OH := (PH-a.Dilation[0]*(KH-1)-1)/a.Stride[0] + 1
	OW := (PW-a.Dilation[1]*(KW-1)-1)/a.Stride[1] + 1
	out := make([]float32, N*OH*OW*M)
	G := a.Group
	for n := 0; n < N; n++ {
		for grp := 0; grp < G; grp++ {
			for m := grp * M / G; m < (grp+1)*M/G; m++ {
				for oy := 0; oy < OH; oy++ {
					for ox := 0; ox < OW; ox++ {
						s := 0.0
						if b != nil {
							s = float64(b.F[m])
						}
						for c := 0; c < CG; c++ {
							for ky := 0; ky < KH; ky++ {
								for kx := 0; kx < KW; kx++ {
									v := padded[at(n, grp*CG+c, oy*a.Stride[0]+ky*a.Dilation[0], ox*a.Stride[1]+kx*a.Dilation[1])]
									s += v * float64(w.F[((m*KH+ky)*KW+kx)*CG+c])
								}
							}
						}
						out[((n*OH+oy)*OW+ox)*M+m] = float32(s)
					}
				}
			}
		}
	}
	return []int{N, OH, OW, M}, out
}

func TestConv2DAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := []struct {
		n, h, w, cin, cout, kh, kw, group int
		a                                 graph.Conv2DAttrs
	}{
		{1, 5, 6, 3, 4, 3, 3, 1, graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}},
		{2, 7, 5, 4, 6, 3, 2, 2, graph.Conv2DAttrs{Stride: [2]int{2, 1}, Dilation: [2]int{1, 2}, Pad: padding(1, 0, 2, 1)}},
		{1, 6, 6, 3, 6, 3, 3, 3, graph.Conv2DAttrs{Stride: [2]int{2, 2}, Dilation: [2]int{2, 2}, Pad: padding(2, 2, 2, 2)}},
		{1, 4, 5, 4, 8, 2, 3, 4, graph.Conv2DAttrs{Stride: [2]int{1, 2}, Dilation: [2]int{1, 1}, Pad: padding(0, 1, 1, 0)}},
		{1, 9, 9, 6, 3, 5, 5, 3, graph.Conv2DAttrs{Stride: [2]int{3, 3}, Dilation: [2]int{1, 1}, Pad: padding(2, 1, 0, 2)}},
	}
	for i, c := range cases {
		c.a.Group = c.group
		x := randData(r, c.n, c.h, c.w, c.cin)
		w := randData(r, c.cout, c.kh, c.kw, c.cin/c.group)
		b := randData(r, c.cout)
		shape, want := naiveConv(x, w, b, c.a)
		got := mustRun(t, graph.Conv2D, &c.a, shape, x, w, b)
		closeTo(t, got.F, want)
		if t.Failed() {
			t.Fatalf("case %d", i)
		}
	}
}

func TestConv2DErrors(t *testing.T) {
	x := fd([]int{1, 2, 2, 3}, make([]float32, 12)...)
	_, err := runOp(graph.Conv2D, &graph.Conv2DAttrs{}, []int{1, 0, 0, 8}, x, graph.NewData(graph.Float32, []int{8, 3, 3, 4}))
	if err == nil || !strings.Contains(err.Error(), "conv weights [8 3 3 4] do not match 3 input channels with group 1") {
		t.Fatalf("got %v", err)
	}
	_, err = runOp(graph.Conv2D, &graph.Conv2DAttrs{}, []int{1, 2, 2, 8}, x, graph.NewData(graph.Float32, []int{8, 1, 1, 3}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = runOp(graph.Conv2D, &graph.Conv2DAttrs{}, []int{1, 3, 2, 8}, x, graph.NewData(graph.Float32, []int{8, 1, 1, 3}))
	if err == nil || !strings.Contains(err.Error(), "output shape") {
		t.Fatalf("got %v", err)
	}
	_, err = runOp(graph.Conv2D, &graph.PoolAttrs{}, []int{1, 2, 2, 8}, x, graph.NewData(graph.Float32, []int{8, 1, 1, 3}))
	if err == nil || !strings.Contains(err.Error(), "attributes have type") {
		t.Fatalf("got %v", err)
	}
	_, err = runOp(graph.Conv2D, nil, []int{1, 2, 2, 8}, x, graph.NewData(graph.Float32, []int{8, 1, 1, 3}), graph.NewData(graph.Float32, []int{7}))
	if err == nil || !strings.Contains(err.Error(), "bias") {
		t.Fatalf("got %v", err)
	}
}

func TestFullyConnected(t *testing.T) {
	x := fd([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	w := fd([]int{2, 3}, 1, 0, -1, 0.5, 0.5, 0.5)
	b := fd([]int{2}, 10, -10)
	got := mustRun(t, graph.FullyConnected, &graph.FullyConnectedAttrs{}, []int{2, 2}, x, w, b)
	closeTo(t, got.F, []float32{8, -7, 8, -2.5})
	got = mustRun(t, graph.FullyConnected, nil, []int{2, 2}, x, w, nil)
	closeTo(t, got.F, []float32{-2, 3, -2, 7.5})
	got = mustRun(t, graph.FullyConnected, &graph.FullyConnectedAttrs{Act: graph.ActRelu}, []int{2, 2}, x, w, b)
	closeTo(t, got.F, []float32{8, 0, 8, 0})
	// KeepDims: [1,2,3] -> [1,2,2]; flattening: [1,2,1,3] -> [2,2].
	got = mustRun(t, graph.FullyConnected, &graph.FullyConnectedAttrs{KeepDims: true}, []int{1, 2, 2}, fd([]int{1, 2, 3}, x.F...), w, b)
	closeTo(t, got.F, []float32{8, -7, 8, -2.5})
	got = mustRun(t, graph.FullyConnected, nil, []int{1, 4}, fd([]int{1, 6}, x.F...), fd([]int{4, 6}, make([]float32, 24)...), nil)
	closeTo(t, got.F, []float32{0, 0, 0, 0})
	if _, err := runOp(graph.FullyConnected, nil, []int{2, 2}, fd([]int{1, 4}, 1, 2, 3, 4), w, b); err == nil {
		t.Fatal("K mismatch accepted")
	}
}

// naiveMatMul multiplies the logical matrices a (m×k) and b (k×n), given as
// element functions.
func naiveMatMul(m, k, n int, a, b func(i, j int) float32) []float32 {
	out := make([]float32, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s += float64(a(i, l)) * float64(b(l, j))
			}
			out[i*n+j] = float32(s)
		}
	}
	return out
}

func TestBatchMatMul(t *testing.T) {
	got := mustRun(t, graph.BatchMatMul, nil, []int{2, 2}, fd([]int{2, 3}, 1, 2, 3, 4, 5, 6), fd([]int{3, 2}, 7, 8, 9, 10, 11, 12))
	closeTo(t, got.F, []float32{58, 64, 139, 154})
	// 1-D operands as in numpy.
	got = mustRun(t, graph.BatchMatMul, nil, []int{2}, fd([]int{3}, 1, 2, 3), fd([]int{3, 2}, 7, 8, 9, 10, 11, 12))
	closeTo(t, got.F, []float32{58, 64})

	r := rand.New(rand.NewSource(2))
	// Broadcast batch: A [2,1,3,4] · B [3,4,5] -> [2,3,3,5]; with adjoints.
	for _, adj := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		ash := []int{2, 1, 3, 4}
		bsh := []int{3, 4, 5}
		if adj[0] {
			ash = []int{2, 1, 4, 3}
		}
		if adj[1] {
			bsh = []int{3, 5, 4}
		}
		a, b := randData(r, ash...), randData(r, bsh...)
		got := mustRun(t, graph.BatchMatMul, &graph.BatchMatMulAttrs{AdjX: adj[0], AdjY: adj[1]}, []int{2, 3, 3, 5}, a, b)
		var want []float32
		for i := 0; i < 2; i++ {
			for j := 0; j < 3; j++ {
				ea := func(m, k int) float32 {
					if adj[0] {
						return a.F[i*12+k*3+m]
					}
					return a.F[i*12+m*4+k]
				}
				eb := func(k, n int) float32 {
					if adj[1] {
						return b.F[j*20+n*4+k]
					}
					return b.F[j*20+k*5+n]
				}
				want = append(want, naiveMatMul(3, 4, 5, ea, eb)...)
			}
		}
		closeTo(t, got.F, want)
	}
	if _, err := runOp(graph.BatchMatMul, nil, []int{2, 2}, fd([]int{2, 3}, seq(6)...), fd([]int{2, 2}, seq(4)...)); err == nil || !strings.Contains(err.Error(), "inner dims") {
		t.Fatalf("got %v", err)
	}
	if _, err := runOp(graph.BatchMatMul, nil, []int{2, 2, 2}, fd([]int{2, 2, 3}, seq(12)...), fd([]int{3, 3, 2}, seq(18)...)); err == nil || !strings.Contains(err.Error(), "broadcast") {
		t.Fatalf("got %v", err)
	}
}

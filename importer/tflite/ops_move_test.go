package tflite_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Operator codes and option types of the data-movement operators (the
// TFLite schema's BuiltinOperator and BuiltinOptions numbers).
const (
	opDepthToSpace    = 5
	opEmbeddingLookup = 7
	opSpaceToDepth    = 26
	opGather          = 36
	opBatchToSpaceND  = 37
	opSpaceToBatchND  = 38
	opSplit           = 49
	opSlice           = 65
	opTile            = 69
	opShape           = 77
	opPack            = 83
	opOneHot          = 85
	opUnpack          = 88
	opZerosLike       = 93
	opFill            = 94
	opMirrorPad       = 100
	opSplitV          = 102
	opReverseV2       = 105
	opGatherND        = 107
	opScatterND       = 122
	opRank            = 110
	opBroadcastTo     = 130
)

func opts(typ uint8, f ...tg.Field) *tg.Options { return &tg.Options{Type: typ, Fields: f} }

// i32in is an int32 activation (run-time indices).
func i32in(shape ...int32) spec { return spec{typ: tg.Int32, shape: shape} }

// seq is 1, 2, ..., n.
func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i + 1)
	}
	return v
}

// moveFloatCases and moveIntCases: the data-movement operators of
// ops_move.go, with results worked by hand from TensorFlow's definitions.
var moveFloatCases = []opCase{
	// [[1 2 3 4] [5 6 7 8]] split in two along axis 1.
	{name: "split", code: opSplit, opts: opts(35, tg.I32(0, 2)),
		ins: []spec{i32c([]int32{}, 1), fin(2, 4)}, out: fin(2, 2), more: []spec{fin(2, 2)},
		feed: [][]float64{seq(8)}, want: f64(1, 2, 5, 6), wantMore: [][]float64{{3, 4, 7, 8}}},
	// Sizes 2 and the rest (-1) of 5, along the last axis (-1).
	{name: "split_v", code: opSplitV, opts: opts(79, tg.I32(0, 2)),
		ins: []spec{fin(1, 5), i32c([]int32{2}, 2, -1), i32c([]int32{}, -1)}, out: fin(1, 2), more: []spec{fin(1, 3)},
		feed: [][]float64{seq(5)}, want: f64(1, 2), wantMore: [][]float64{{3, 4, 5}}},
	// Two [2] vectors stacked along axis 1: [[1 3] [2 4]].
	{name: "pack", code: opPack, opts: opts(59, tg.I32(0, 2), tg.I32(1, 1)),
		ins: []spec{fin(2), fin(2)}, out: fin(2, 2),
		feed: [][]float64{{1, 2}, {3, 4}}, want: f64(1, 3, 2, 4)},
	// [[1 2 3] [4 5 6]] unpacked along axis 1 into three [2] vectors.
	{name: "unpack", code: opUnpack, opts: opts(64, tg.I32(0, 3), tg.I32(1, 1)),
		ins: []spec{fin(2, 3)}, out: fin(2), more: []spec{fin(2), fin(2)},
		feed: [][]float64{seq(6)}, want: f64(1, 4), wantMore: [][]float64{{2, 5}, {3, 6}}},
	// Rows 1..2, all columns (size -1) of a 3x3.
	{name: "slice", code: opSlice,
		ins: []spec{fin(3, 3), i32c([]int32{2}, 1, 0), i32c([]int32{2}, 2, -1)}, out: fin(2, 3),
		feed: [][]float64{seq(9)}, want: f64(4, 5, 6, 7, 8, 9)},
	// Columns 2 and 0 of [[1 2 3] [4 5 6]].
	{name: "gather", code: opGather, opts: opts(23, tg.I32(0, 1)),
		ins: []spec{fin(2, 3), i32c([]int32{2}, 2, 0)}, out: fin(2, 2),
		feed: [][]float64{seq(6)}, want: f64(3, 1, 6, 4)},
	// Rows chosen at run time: [2 0 1] of a constant 3x2 table.
	{name: "gather_runtime", code: opGather, opts: opts(23, tg.I32(0, 0)),
		ins: []spec{fc([]int32{3, 2}, 1, 2, 3, 4, 5, 6), i32in(3)}, out: fin(3, 2),
		feed: [][]float64{{2, 0, 1}}, want: f64(5, 6, 1, 2, 3, 4)},
	// Elements (1,0) and (0,1) of [[1 2] [3 4]].
	{name: "gather_nd", code: opGatherND,
		ins: []spec{fin(2, 2), i32c([]int32{2, 2}, 1, 0, 0, 1)}, out: fin(2),
		feed: [][]float64{seq(4)}, want: f64(3, 2)},
	// Run-time indices into a constant [2,2,2]: (1,1) is the row [7 8], (0,1) [3 4].
	{name: "gather_nd_runtime", code: opGatherND,
		ins: []spec{fc([]int32{2, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8), i32in(2, 2)}, out: fin(2, 2),
		feed: [][]float64{{1, 1, 0, 1}}, want: f64(7, 8, 3, 4)},
	// TensorFlow's scatter_nd example on a vector of 8: 9 at 4, 10 at 3,
	// 11 at 1, 12 at 7, zeros elsewhere.
	{name: "scatter_nd", code: opScatterND,
		ins: []spec{i32c([]int32{4, 1}, 4, 3, 1, 7), fin(4), i32c([]int32{1}, 8)}, out: fin(8),
		feed: [][]float64{{9, 10, 11, 12}}, want: f64(0, 11, 0, 10, 9, 0, 0, 12)},
	// Rows of a [3, 2] chosen at run time: row 2 twice (the updates add
	// up), row 0 once, and row 5, outside the tensor, skipped.
	{name: "scatter_nd_runtime", code: opScatterND,
		ins: []spec{i32in(4, 1), fin(4, 2), i32c([]int32{2}, 3, 2)}, out: fin(3, 2),
		feed: [][]float64{{2, 0, 5, 2}, seq(8)}, want: f64(3, 4, 0, 0, 8, 10)},
	// Ids [1 0] into the table [[1 2] [3 4]].
	{name: "embedding_lookup", code: opEmbeddingLookup,
		ins: []spec{i32in(2), fc([]int32{2, 2}, 1, 2, 3, 4)}, out: fin(2, 2),
		feed: [][]float64{{1, 0}}, want: f64(3, 4, 1, 2)},
	// [[1 2 3 4] [5 6 7 8]] (one channel) in 2x2 blocks: depth holds a
	// block's (row, column) in order, so the blocks are 1 2 5 6 and 3 4 7 8.
	{name: "space_to_depth", code: opSpaceToDepth, opts: opts(19, tg.I32(0, 2)),
		ins: []spec{fin(1, 2, 4, 1)}, out: fin(1, 1, 2, 4),
		feed: [][]float64{seq(8)}, want: f64(1, 2, 5, 6, 3, 4, 7, 8)},
	{name: "depth_to_space", code: opDepthToSpace, opts: opts(94, tg.I32(0, 2)),
		ins: []spec{fin(1, 1, 2, 4)}, out: fin(1, 2, 4, 1),
		feed: [][]float64{{1, 2, 5, 6, 3, 4, 7, 8}}, want: seq(8)},
	// Block 2x2 of [[1 2 3 4] [5 6 7 8]]: batch b = (row offset, column
	// offset) = (0,0): 1 3; (0,1): 2 4; (1,0): 5 7; (1,1): 6 8.
	{name: "space_to_batch_nd", code: opSpaceToBatchND,
		ins: []spec{fin(1, 2, 4, 1), i32c([]int32{2}, 2, 2), i32c([]int32{2, 2}, 0, 0, 0, 0)}, out: fin(4, 1, 2, 1),
		feed: [][]float64{seq(8)}, want: f64(1, 3, 2, 4, 5, 7, 6, 8)},
	// [[1 2] [3 4]] padded by one column each side: [[0 1 2 0] [0 3 4 0]].
	{name: "space_to_batch_nd_padded", code: opSpaceToBatchND,
		ins: []spec{fin(1, 2, 2, 1), i32c([]int32{2}, 2, 2), i32c([]int32{2, 2}, 0, 0, 1, 1)}, out: fin(4, 1, 2, 1),
		feed: [][]float64{seq(4)}, want: f64(0, 2, 1, 0, 0, 4, 3, 0)},
	{name: "batch_to_space_nd", code: opBatchToSpaceND,
		ins: []spec{fin(4, 1, 2, 1), i32c([]int32{2}, 2, 2), i32c([]int32{2, 2}, 0, 0, 0, 0)}, out: fin(1, 2, 4, 1),
		feed: [][]float64{{1, 3, 2, 4, 5, 7, 6, 8}}, want: seq(8)},
	// The padded case back, its padding cropped.
	{name: "batch_to_space_nd_cropped", code: opBatchToSpaceND,
		ins: []spec{fin(4, 1, 2, 1), i32c([]int32{2}, 2, 2), i32c([]int32{2, 2}, 0, 0, 1, 1)}, out: fin(1, 2, 2, 1),
		feed: [][]float64{{0, 2, 1, 0, 0, 4, 3, 0}}, want: seq(4)},
	// [1 2 3] padded 2 before, 1 after. REFLECT: 3 2 | 1 2 3 | 2.
	{name: "mirror_pad_reflect", code: opMirrorPad, opts: opts(77, tg.I8(0, 0)),
		ins: []spec{fin(3), i32c([]int32{1, 2}, 2, 1)}, out: fin(6),
		feed: [][]float64{seq(3)}, want: f64(3, 2, 1, 2, 3, 2)},
	// SYMMETRIC repeats the edge: 2 1 | 1 2 3 | 3.
	{name: "mirror_pad_symmetric", code: opMirrorPad, opts: opts(77, tg.I8(0, 1)),
		ins: []spec{fin(3), i32c([]int32{1, 2}, 2, 1)}, out: fin(6),
		feed: [][]float64{seq(3)}, want: f64(2, 1, 1, 2, 3, 3)},
	// [[1 2] [3 4]], one row before and one column after, SYMMETRIC:
	// [[1 2 2] [1 2 2] [3 4 4]].
	{name: "mirror_pad_symmetric_2d", code: opMirrorPad, opts: opts(77, tg.I8(0, 1)),
		ins: []spec{fin(2, 2), i32c([]int32{2, 2}, 1, 0, 0, 1)}, out: fin(3, 3),
		feed: [][]float64{seq(4)}, want: f64(1, 2, 2, 1, 2, 2, 3, 4, 4)},
	{name: "tile", code: opTile,
		ins: []spec{fin(1, 2), i32c([]int32{2}, 2, 2)}, out: fin(2, 4),
		feed: [][]float64{{1, 2}}, want: f64(1, 2, 1, 2, 1, 2, 1, 2)},
	// [[1] [2]] to [2, 2, 3]: a new leading axis, the column repeated.
	{name: "broadcast_to", code: opBroadcastTo,
		ins: []spec{fin(2, 1), i32c([]int32{3}, 2, 2, 3)}, out: fin(2, 2, 3),
		feed: [][]float64{{1, 2}}, want: f64(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2)},
	{name: "reverse_v2", code: opReverseV2,
		ins: []spec{fin(2, 3), i32c([]int32{1}, 1)}, out: fin(2, 3),
		feed: [][]float64{seq(6)}, want: f64(3, 2, 1, 6, 5, 4)},
	// Indices [1 1 0] (run time), depth 3, on 5, off -1, on a new last axis:
	// rows (-1 5 -1), (-1 5 -1), (5 -1 -1).
	{name: "one_hot", code: opOneHot, opts: opts(61, tg.I32(0, -1)),
		ins: []spec{i32in(3), i32c([]int32{}, 3), fc([]int32{}, 5), fc([]int32{}, -1)}, out: fin(3, 3),
		feed: [][]float64{{1, 1, 0}}, want: f64(-1, 5, -1, -1, 5, -1, 5, -1, -1)},
	// The same without an axis field: the schema's default, 0, gives
	// out[d][i] = indices[i] == d: rows (-1 -1 5), (5 5 -1), (-1 -1 -1).
	{name: "one_hot_axis0", code: opOneHot, opts: opts(61),
		ins: []spec{i32in(3), i32c([]int32{}, 3), fc([]int32{}, 5), fc([]int32{}, -1)}, out: fin(3, 3),
		feed: [][]float64{{1, 1, 0}}, want: f64(-1, -1, 5, 5, 5, -1, -1, -1, -1)},
	{name: "shape", code: opShape,
		ins: []spec{fin(2, 3)}, out: spec{typ: tg.Int32, shape: []int32{2}},
		feed: [][]float64{seq(6)}, want: f64(2, 3)},
	{name: "rank", code: opRank,
		ins: []spec{fin(2, 3)}, out: spec{typ: tg.Int32, shape: []int32{}},
		feed: [][]float64{seq(6)}, want: f64(2)},
	{name: "zeros_like", code: opZerosLike,
		ins: []spec{fin(3)}, out: fin(3),
		feed: [][]float64{seq(3)}, want: f64(0, 0, 0)},
}

var moveIntCases = []opCase{
	// Stored values are copied: -3 0 | 5 127.
	{name: "split", code: opSplit, opts: opts(35, tg.I32(0, 2)),
		ins: []spec{i32c([]int32{}, 1), qin(0.5, 1, 1, 4)}, out: qin(0.5, 1, 1, 2), more: []spec{qin(0.5, 1, 1, 2)},
		feed: [][]float64{{-3, 0, 5, 127}}, want: f64(-3, 0), wantMore: [][]float64{{5, 127}}},
	{name: "pack", code: opPack, opts: opts(59, tg.I32(0, 2), tg.I32(1, 0)),
		ins: []spec{qin(0.5, 1, 2), qin(0.5, 1, 2)}, out: qin(0.5, 1, 2, 2),
		feed: [][]float64{{-128, 1}, {2, 127}}, want: f64(-128, 1, 2, 127)},
	{name: "gather", code: opGather, opts: opts(23, tg.I32(0, 0)),
		ins: []spec{qin(0.25, -2, 3), i32in(4)}, out: qin(0.25, -2, 4),
		feed: [][]float64{{-7, 9, 100}, {2, 2, 0, 1}}, want: f64(100, 100, -7, 9)},
	// The padding is the zero point, -3: [[-3 1 2 -3] [-3 3 4 -3]] rearranged.
	{name: "space_to_batch_nd_padded", code: opSpaceToBatchND,
		ins: []spec{qin(0.5, -3, 1, 2, 2, 1), i32c([]int32{2}, 2, 2), i32c([]int32{2, 2}, 0, 0, 1, 1)}, out: qin(0.5, -3, 4, 1, 2, 1),
		feed: [][]float64{seq(4)}, want: f64(-3, 2, 1, -3, -3, 4, 3, -3)},
	{name: "mirror_pad_symmetric", code: opMirrorPad, opts: opts(77, tg.I8(0, 1)),
		ins: []spec{qin(0.5, 0, 3), i32c([]int32{1, 2}, 1, 2)}, out: qin(0.5, 0, 6),
		feed: [][]float64{{-128, 0, 127}}, want: f64(-128, -128, 0, 127, 127, 0)},
	{name: "depth_to_space", code: opDepthToSpace, opts: opts(94, tg.I32(0, 2)),
		ins: []spec{qin(0.5, 4, 1, 1, 2, 4)}, out: qin(0.5, 4, 1, 2, 4, 1),
		feed: [][]float64{{1, 2, 5, 6, 3, 4, 7, 8}}, want: seq(8)},
	{name: "tile", code: opTile,
		ins: []spec{qin(0.5, 4, 2), i32c([]int32{1}, 3)}, out: qin(0.5, 4, 6),
		feed: [][]float64{{-1, 1}}, want: f64(-1, 1, -1, 1, -1, 1)},
	// The stored extremes over axis 0 of [[-128 7 3] [100 -5 3]] (keep_dims).
	{name: "reduce_max", code: tg.OpReduceMax, opts: &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{qin(0.5, -2, 2, 3), i32c([]int32{1}, 0)}, out: qin(0.5, -2, 1, 3),
		feed: [][]float64{{-128, 7, 3, 100, -5, 3}}, want: f64(100, 7, 3)},
	{name: "reduce_min", code: tg.OpReduceMin, opts: &tg.Options{Type: tg.OptReducer},
		ins: []spec{qin(0.5, -2, 2, 3), i32c([]int32{1}, 1)}, out: qin(0.5, -2, 2),
		feed: [][]float64{{-128, 7, 3, 100, -5, 3}}, want: f64(-128, -5)},
	// int8 SUM, TFLite Micro's QuantizedMeanOrSum: reduce_test.cc's
	// SumInt84DKeepDims (1..24 at scale 1, axes 1 and 2) and
	// SumInt82DKeepDims (1..8 stored as 2..16 at scale 0.5).
	{name: "sum_4d", code: tg.OpSum, opts: &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{qin(1, 0, 2, 2, 3, 2), i32c([]int32{2}, 1, 2)}, out: qin(1, 0, 2, 1, 1, 2),
		feed: [][]float64{seq(24)}, want: f64(36, 42, 108, 114)},
	{name: "sum_2d", code: tg.OpSum, opts: &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{qin(0.5, 0, 2, 4), i32c([]int32{1}, 1)}, out: qin(0.5, 0, 2, 1),
		feed: [][]float64{{2, 4, 6, 8, 10, 12, 14, 16}}, want: f64(20, 52)},
	// Zero points and a rescale, by hand: the sums 79 and -16 less -3·8
	// are 103 and 8; times 0.05/0.2 = 0.25 they are 25.75 and 2, rounded
	// 26 and 2, plus the output zero point 5.
	{name: "sum_rescaled", code: tg.OpSum, opts: &tg.Options{Type: tg.OptReducer},
		ins: []spec{qin(0.05, -3, 2, 8), i32c([]int32{1}, 1)}, out: qin(0.2, 5, 2),
		feed: [][]float64{{-128, -100, -3, 0, 7, 50, 127, 126, 1, 2, 3, 4, -5, -6, -7, -8}}, want: f64(31, 7)},
}

func TestMoveOps(t *testing.T) {
	for _, c := range append(append([]opCase{}, moveFloatCases...), moveIntCases...) {
		t.Run(c.name, c.run)
	}
}

// TestMoveRefusals: quantization that a copy would change, and arguments
// that do not fit, are refused with the reason.
func TestMoveRefusals(t *testing.T) {
	for _, tc := range []struct {
		c    opCase
		want string
	}{
		{opCase{name: "pack_requant", code: opPack, opts: opts(59, tg.I32(0, 1), tg.I32(1, 0)),
			ins: []spec{qin(0.5, 1, 2)}, out: qin(0.25, 1, 1, 2)}, "quantized differently"},
		{opCase{name: "split_uneven", code: opSplit, opts: opts(35, tg.I32(0, 2)),
			ins: []spec{i32c([]int32{}, 0), fin(3)}, out: fin(1), more: []spec{fin(2)}}, "do not divide"},
		{opCase{name: "split_v_sum", code: opSplitV, opts: opts(79, tg.I32(0, 2)),
			ins: []spec{fin(5), i32c([]int32{2}, 2, 2), i32c([]int32{}, 0)}, out: fin(2), more: []spec{fin(2)}}, "do not add up"},
		{opCase{name: "gather_batch_dims", code: opGather, opts: opts(23, tg.I32(0, 1), tg.I32(1, 1)),
			ins: []spec{fin(2, 3), i32c([]int32{2, 1}, 0, 1)}, out: fin(2, 1)}, "batch_dims"},
		{opCase{name: "gather_out_of_range", code: opGather, opts: opts(23, tg.I32(0, 0)),
			ins: []spec{fin(2), i32c([]int32{1}, 2)}, out: fin(1)}, "out of range"},
		{opCase{name: "space_to_depth_block", code: opSpaceToDepth, opts: opts(19, tg.I32(0, 2)),
			ins: []spec{fin(1, 3, 2, 1)}, out: fin(1, 1, 1, 4)}, "does not divide"},
		{opCase{name: "mirror_pad_too_far", code: opMirrorPad, opts: opts(77, tg.I8(0, 0)),
			ins: []spec{fin(3), i32c([]int32{1, 2}, 3, 0)}, out: fin(6)}, "exceed"},
		{opCase{name: "broadcast_to_bad", code: opBroadcastTo,
			ins: []spec{fin(2), i32c([]int32{1}, 3)}, out: fin(3)}, "cannot broadcast"},
		{opCase{name: "reduce_max_requant", code: tg.OpReduceMax, opts: &tg.Options{Type: tg.OptReducer},
			ins: []spec{qin(0.5, 0, 2), i32c([]int32{1}, 0)}, out: qin(0.25, 0)}, "quantized differently"},
		{opCase{name: "prod_int8", code: tg.OpReduceProd, opts: &tg.Options{Type: tg.OptReducer},
			ins: []spec{qin(0.5, 0, 2), i32c([]int32{1}, 0)}, out: qin(0.5, 0)}, "not supported"},
		{opCase{name: "batch_to_space_huge_block", code: opBatchToSpaceND,
			ins: []spec{fin(1, 1, 1, 1, 1), i32c([]int32{4}, 65536, 65536, 65536, 65536), i32c([]int32{4, 2}, 0, 0, 0, 0, 0, 0, 0, 0)}, out: fin(1, 1, 1, 1, 1)}, "exceeds the batch"},
		{opCase{name: "shape_int8", code: opShape, ins: []spec{fin(2, 300)}, out: qin(1, 0, 2)}, "want int32 or int64"},
		{opCase{name: "slice_past_end", code: opSlice,
			ins: []spec{fin(3), i32c([]int32{1}, 2), i32c([]int32{1}, 2)}, out: fin(2)}, "out of range"},
	} {
		t.Run(tc.c.name, func(t *testing.T) {
			_, err := tflite.Decode(tc.c.name, tc.c.model().Bytes())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one that says %q", err, tc.want)
			}
		})
	}
}

// TestFillFolds: FILL of constant dims and value, and BROADCAST_ARGS of
// constant shapes ([2,1,3] and [4,1]: [2,4,3]), are constant outputs.
func TestFillFolds(t *testing.T) {
	for _, c := range []opCase{
		{name: "fill", code: opFill,
			ins: []spec{i32c([]int32{2}, 2, 2), fc([]int32{}, 1.5)}, out: fin(2, 2), want: f64(1.5, 1.5, 1.5, 1.5)},
		{name: "broadcast_args", code: 145,
			ins: []spec{i32c([]int32{3}, 2, 1, 3), i32c([]int32{2}, 4, 1)}, out: spec{typ: tg.Int32, shape: []int32{3}}, want: f64(2, 4, 3)},
	} {
		t.Run(c.name, c.run)
	}
	bad := opCase{name: "broadcast_args_bad", code: 145,
		ins: []spec{i32c([]int32{1}, 2), i32c([]int32{1}, 3)}, out: spec{typ: tg.Int32, shape: []int32{1}}}
	if _, err := tflite.Decode(bad.name, bad.model().Bytes()); err == nil || !strings.Contains(err.Error(), "do not broadcast") {
		t.Errorf("error %v, want one that says the shapes do not broadcast", err)
	}
}

// TestTopKV2: the 3 largest of each row, sorted, ties to the earlier
// element: [5 1 5 3] -> 5 5 3 at 0 2 3; [-2 0 7 -1] -> 7 0 -1 at 2 1 3;
// int8 values are copied as stored.
func TestTopKV2(t *testing.T) {
	for _, c := range topKCases {
		t.Run(c.name, c.run)
	}
}

var topKCases = []opCase{
	{name: "topk_v2", code: 48, ins: []spec{fin(2, 4), i32c([]int32{}, 3)}, out: fin(2, 3), more: []spec{{typ: tg.Int32, shape: []int32{2, 3}}},
		feed: [][]float64{{5, 1, 5, 3, -2, 0, 7, -1}}, want: f64(5, 5, 3, 7, 0, -1), wantMore: [][]float64{{0, 2, 3, 2, 1, 3}}},
	{name: "topk_v2_int8", code: 48, ins: []spec{qin(0.5, -3, 1, 5), i32c([]int32{}, 2)}, out: qin(0.5, -3, 1, 2), more: []spec{{typ: tg.Int32, shape: []int32{1, 2}}},
		feed: [][]float64{{-128, 127, 4, 127, 0}}, want: f64(127, 127), wantMore: [][]float64{{1, 3}}},
}

// TestFillTooLarge: a FILL whose constant would hold 2^26 elements is
// refused, not allocated.
func TestFillTooLarge(t *testing.T) {
	c := opCase{name: "fill_big", code: opFill,
		ins: []spec{i32c([]int32{2}, 8192, 8192), fc([]int32{}, 1)}, out: fin(8192, 8192)}
	_, err := tflite.Decode(c.name, c.model().Bytes())
	if err == nil || !strings.Contains(err.Error(), "too large to fold") && !strings.Contains(err.Error(), "more than 16777216 elements") {
		t.Fatalf("error %v, want one that says the constant is too large", err)
	}
}

// TestRecurrentStepCap: a sequence longer than graph.MaxRNNSteps is refused
// before it is unrolled.
func TestRecurrentStepCap(t *testing.T) {
	c := opCase{name: "rnn_long", code: 35, opts: opts(31, tg.Bool(0, false), tg.I8(1, tg.ActTanh)),
		ins: []spec{fin(1, 5000, 1), fc([]int32{1, 1}, 0.5), fc([]int32{1, 1}, 0.5), fc([]int32{1}, 0), fin(1, 1)}, out: fin(1, 5000, 1)}
	_, err := tflite.Decode(c.name, c.model().Bytes())
	if err == nil || !strings.Contains(err.Error(), "unrolls at most") {
		t.Fatalf("error %v, want one that names the step limit", err)
	}
}

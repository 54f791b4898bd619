package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/graph/qmath"
	"github.com/mcugen/mcugen/tir"
)

// act_s16 is tir.IntrAct16: TFLite's int16 LOGISTIC and TANH
// (reference_integer_ops::Logistic and Tanh on int16_t, qmath.Act16Params
// in Go), with TFLite's sigmoid table inside the one function that reads
// it (a file-scope table would be an unused constant in models without
// it).
func init() {
	var b strings.Builder
	b.WriteString(`/* TFLite's int16 LOGISTIC (is_tanh 0) and TANH (is_tanh 1): the input rescaled by
   (x * mult + round) >> shift, its magnitude interpolated in sigmoid_table_uint16 (sigmoid(i/24)
   in Q0.16; tanh(x) = 2 sigmoid(2x) - 1 reads it at twice the step), the result in Q0.15. */
static inline int32_t ` + tir.IntrAct16 + `(int32_t x, int32_t mult, int32_t shift, int32_t is_tanh)
{
    static const uint16_t t[256] = {
`)
	tab := qmath.SigmoidTable16()
	for i := 0; i < len(tab); i += 12 {
		b.WriteString("        ")
		for j := i; j < min(i+12, len(tab)); j++ {
			fmt.Fprintf(&b, "%d,", tab[j])
			if j+1 < min(i+12, len(tab)) {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString(`    };
    const int32_t in = (x * mult + (shift > 0 ? (INT32_C(1) << (shift - 1)) : 0)) >> shift;
    const uint32_t a = (uint32_t)(in < 0 ? -in : in);
    if (!is_tanh) {
        const uint32_t uh = a >> 9;
        uint32_t r;
        if (uh >= 255u) {
            r = UINT32_C(0x7FFF) << 10;
        } else {
            r = ((uint32_t)t[uh] << 9) + (a & 0x1ffu) * (uint32_t)(t[uh + 1u] - t[uh]);
        }
        r = in >= 0 ? r + (UINT32_C(1) << 9) : (UINT32_C(1) << 25) - r + (UINT32_C(1) << 9) - 1u;
        return (int32_t)(r >> 10);
    } else {
        const uint32_t uh = a >> 8;
        int32_t r;
        if (uh >= 255u) {
            r = INT32_C(0xFFFF) << 8;
        } else {
            r = (int32_t)(((uint32_t)t[uh] << 8) + (a & 0xffu) * (uint32_t)(t[uh + 1u] - t[uh]));
        }
        r = in >= 0 ? r - (INT32_C(1) << 23) + (1 << 7) : -r + (INT32_C(1) << 23) + (1 << 7) - 1;
        return r >> 8;
    }
}`)
	addHelper(tir.IntrAct16, nil, b.String())
}

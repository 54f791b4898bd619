package emitc

import "github.com/mcugen/mcugen/tir"

// The C of tir.IntrDSPWinoIn: the Winograd F(2×2, 3×3) input transform
// Bᵀ d B of one 4×4 tile, two int16 lanes per word (SSUB16/SADD16: the
// values stay within ±1020, so the lanes never wrap).
func init() {
	helperText[tir.IntrDSPWinoIn] = struct {
		deps []string
		code string
	}{[]string{"dsp_acle"}, `/* Winograd F(2x2, 3x3) input transform of one 4x4 tile of int16 pair words:
   d[r * rs + c * cs + k] is row r, column c, word k < n; v[(4r + c) * n + k] = (B^T d B)[r][c]. */
static void dsp_wino_in_s16(int32_t *v, const int32_t *d, int32_t rs, int32_t cs, int32_t n)
{
    int32_t k;
    for (k = 0; k < n; ++k) {
        const int32_t *p = d + k;
        int32_t t[16];
        int32_t c;
        for (c = 0; c < 4; ++c) {
            const int32_t d0 = p[c * cs];
            const int32_t d1 = p[rs + c * cs];
            const int32_t d2 = p[2 * rs + c * cs];
            const int32_t d3 = p[3 * rs + c * cs];
            t[c] = __ssub16(d0, d2);
            t[4 + c] = __sadd16(d1, d2);
            t[8 + c] = __ssub16(d2, d1);
            t[12 + c] = __ssub16(d1, d3);
        }
        for (c = 0; c < 4; ++c) {
            const int32_t *u = t + 4 * c;
            int32_t *o = v + 4 * c * n + k;
            o[0] = __ssub16(u[0], u[2]);
            o[n] = __sadd16(u[1], u[2]);
            o[2 * n] = __ssub16(u[2], u[1]);
            o[3 * n] = __ssub16(u[1], u[3]);
        }
    }
}`}
	helperOrder = append(helperOrder, tir.IntrDSPWinoIn)
}

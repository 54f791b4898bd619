package graph

import "math"

var inf = math.Inf(1)

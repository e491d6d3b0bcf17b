// REDUCE4 adds the four 8-float accumulators Y0 to Y3 into the lowest float of X0 (Y1 and Y2 are clobbered):
// the horizontal sum every float kernel here ends a row with.
#define REDUCE4 \
	VADDPS       Y1, Y0, Y0; \
	VADDPS       Y3, Y2, Y2; \
	VADDPS       Y2, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS       X1, X0, X0; \
	VMOVHLPS     X0, X0, X1; \
	VADDPS       X1, X0, X0; \
	VMOVSHDUP    X0, X1; \
	VADDSS       X1, X0, X0

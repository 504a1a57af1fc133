# Reference for atomics/3: a float atomic max built from compare_and_swap, under the stage's rule
# (NaN is skipped, +0.0 ranks above -0.0).
# One thread: takes its element's bits; NaN and lanes past N carry the bits of -infinity.
# One warp: five shuffle rounds leave the warp's largest value in lane 0, which makes the one
# atomic update of the warp (32 times fewer CAS loops on out[0] than one per element).
# Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
#
# Why bits and keys rather than floats: Numba 0.56 has cuda.atomic.max and nanmax for float32,
# but both skip a NaN and then replace only when old < new, so a -0.0 already in out[0] is never
# replaced by +0.0 (and +0.0 never by -0.0): whichever zero lands first stays. compare_and_swap
# takes integer arrays only, and the device API has no call that reinterprets one float's bits;
# an array's view does: X.view(uint32) and out.view(uint32) are the same bytes read as uint32.
# So this kernel works on bits throughout and compares them through order_key(), which orders
# the bits exactly as the rule orders the floats.
import math

from numba import cuda, int32, uint32

FULL_MASK = 0xFFFFFFFF
SIGN_BIT = 0x80000000
ALL_BITS = 0xFFFFFFFF
MINUS_INFINITY_BITS = 0xFF800000  # the driver's starting out[0]


@cuda.jit(device=True)
def order_key(bits):
    # Floats with the sign bit clear order like their bits; setting the top bit lifts them above
    # every negative. Negative floats order backwards (a larger magnitude has larger bits), so
    # flipping all their bits reverses that. -0.0 (0x80000000) becomes 0x7FFFFFFF, one below
    # +0.0's 0x80000000: +0.0 wins, as the rule says. NaN never gets here.
    if bits & SIGN_BIT:
        return uint32(bits ^ ALL_BITS)
    return uint32(bits | SIGN_BIT)


@cuda.jit
def max_value(X, out, N):
    x_bits = X.view(uint32)
    out_bits = out.view(uint32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x

    # Skip NaN before anything compares it: every comparison with NaN is false, so "is the
    # current value already >= NaN?" would say no, and a NaN would be written into out[0].
    bits = uint32(MINUS_INFINITY_BITS)
    if i < N and not math.isnan(X[i]):
        bits = x_bits[i]

    offset = 16
    while offset > 0:
        # int32 in and out: the 32-bit shuffle, the same bits (a uint32 would go as an int64).
        other = uint32(cuda.shfl_down_sync(FULL_MASK, int32(bits), offset))
        if order_key(other) > order_key(bits):
            bits = other
        offset //= 2

    if cuda.laneid == 0:
        # Read, decide, try to swap; if another thread got there first, decide again against
        # the value it left. A stale first read is harmless: the swap fails and returns the truth.
        seen = out_bits[0]
        while order_key(bits) > order_key(seen):
            before = cuda.atomic.compare_and_swap(out_bits, seen, bits)
            if before == seen:
                break  # our value is in
            seen = before

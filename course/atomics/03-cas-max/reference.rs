// Reference for atomics/3: a float atomic max built from atomic_cas_u32, under the stage's rule
// (NaN is skipped, +0.0 ranks above -0.0).
// One thread: loads its element; NaN and threads past N carry -infinity, which never wins.
// One warp: five shuffle rounds leave the warp's largest value in lane 0, which makes the one
// atomic update of the warp (32 times fewer CAS loops on *out than one per element).
// Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).

// Does `candidate` beat `current` under the rule? Neither is NaN here.
fn beats(candidate: f32, current: f32) -> bool {
    // Two f32s that compare equal but differ in bits can only be -0.0 and +0.0; `>` calls them
    // equal, so the sign bit decides: the candidate wins when it is +0.0 and current is -0.0.
    candidate > current
        || (candidate == current && current.is_sign_negative() && candidate.is_sign_positive())
}

// There is no atomic max for f32. atomic_cas_u32(address, expected, desired) stores `desired`
// only if the word still holds `expected`, and returns what it held: so read, decide, try to
// swap, and if another thread got there first, decide again against the value it left.
unsafe fn atomic_max_by_rule(address: *mut f32, value: f32) {
    let word = address as *mut u32;
    let mut seen = unsafe { *word }; // a stale read is harmless: the CAS fails and tells us
    while beats(value, f32::from_bits(seen)) {
        let before = unsafe { atomic_cas_u32(word, seen, value.to_bits()) };
        if before == seen {
            return; // our value is in
        }
        seen = before; // *out changed under us: is ours still larger?
    }
}

#[kernel]
fn max_value(x: *const f32, out: *mut f32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;

    // Skip NaN before anything compares it: every comparison with NaN is false, so "is the
    // current value already >= NaN?" would say no, and a NaN would be written into *out.
    let mut value = f32::NEG_INFINITY; // the driver's starting *out
    if i < n {
        let element = *x.add(i as usize);
        if !element.is_nan() {
            value = element;
        }
    }

    let mut offset = 16;
    while offset > 0 {
        let other = shfl_down_sync(FULL_MASK, value, offset);
        if beats(other, value) {
            value = other;
        }
        offset /= 2;
    }

    if lane_id() == 0 {
        atomic_max_by_rule(out, value);
    }
}

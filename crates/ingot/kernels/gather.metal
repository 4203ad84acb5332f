// Gathers and scatters through index arrays (integer-array and boolean-mask indexing, take,
// take_along_axis). Elements move as raw bits: K is the unsigned type of the element's width.
//
// An indexing result is presented as a view W of the source whose indexed axis (of length j,
// the product of the index arrays' broadcast shape) has stride 0; `lin[jj]` (element offsets,
// from index_offsets) is added for position jj along it: element i of the contiguous result
// reads src[geom_offsets(i) + lin[(i / post) % j]].

struct GatherGeom {
  ulong post;  // elements of the result after the indexed axis (product of their lengths)
  ulong j;     // length of the indexed axis
};

struct IndexGeom {
  long dim;     // length of the axis being indexed
  long stride;  // its stride in elements
  uint first;   // 1: lin = offset (first index array); 0: lin += offset
  uint pad;
};

// Records an out-of-range index: err[0] = 1, bad[0] = the index (any one of them).
inline void index_fault(device atomic_uint* err, device long* bad, long v) {
  atomic_fetch_or_explicit(err, 1u, memory_order_relaxed);
  bad[0] = v;
}

// lin[i] (+)= idx[i] * stride, negative indices counting from the end; i over the broadcast
// shape of the index arrays (g: operand 0 the index array, broadcast strides).
template <class I>
kernel void index_offsets(device const I* idx [[buffer(0)]], device long* lin [[buffer(1)]],
                          device atomic_uint* err [[buffer(2)]], device long* bad [[buffer(3)]],
                          constant Geom& g [[buffer(4)]], constant IndexGeom& q [[buffer(5)]],
                          uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) {
    long o[1];
    geom_offsets<1>(g, i, o);
    long v = long(idx[o[0]]);
    if (v < 0l) v += q.dim;
    if (v < 0l || v >= q.dim) {
      index_fault(err, bad, long(idx[o[0]]));
      v = 0l;
    }
    long off = v * q.stride;
    lin[i] = q.first ? off : lin[i] + off;
  }
}

// out (contiguous, W's shape) = src through W (g: operand 0, the indexed axis with stride 0).
template <class K>
kernel void gather(device const K* src [[buffer(0)]], device const long* lin [[buffer(1)]],
                   device K* out [[buffer(2)]], constant Geom& g [[buffer(3)]],
                   constant GatherGeom& q [[buffer(4)]], uint tid [[thread_position_in_grid]],
                   uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) {
    long o[1];
    geom_offsets<1>(g, i, o);
    out[i] = src[o[0] + lin[(i / q.post) % q.j]];
  }
}

// dst through W (operand 0, indexed axis of stride 0) = val (operand 1, broadcast to W's shape).
// Repeated indices write one of their values.
template <class K>
kernel void scatter(device K* dst [[buffer(0)]], device const long* lin [[buffer(1)]],
                    device const K* val [[buffer(2)]], constant Geom& g [[buffer(3)]],
                    constant GatherGeom& q [[buffer(4)]], uint tid [[thread_position_in_grid]],
                    uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) {
    long o[2];
    geom_offsets<2>(g, i, o);
    dst[o[0] + lin[(i / q.post) % q.j]] = val[o[1]];
  }
}

// take_along_axis: out[i] = src[offset of i with the axis at 0 + idx[i] * stride] (g: operand 0
// the source with stride 0 along the axis, operand 1 the indices broadcast to the result).
template <class K>
kernel void take_along(device const K* src [[buffer(0)]], device const long* idx [[buffer(1)]],
                       device K* out [[buffer(2)]], device atomic_uint* err [[buffer(3)]],
                       device long* bad [[buffer(4)]], constant Geom& g [[buffer(5)]],
                       constant IndexGeom& q [[buffer(6)]], uint tid [[thread_position_in_grid]],
                       uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) {
    long o[2];
    geom_offsets<2>(g, i, o);
    long v = idx[o[1]];
    if (v < 0l) v += q.dim;
    if (v < 0l || v >= q.dim) {
      index_fault(err, bad, idx[o[1]]);
      v = 0l;
    }
    out[i] = src[o[0] + v * q.stride];
  }
}

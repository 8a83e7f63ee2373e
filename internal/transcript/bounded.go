package transcript

// fifoMap is a map that holds at most max keys: adding one more forgets
// the key added longest ago (re-setting a key does not refresh it). It is
// how a Checker keeps its tables bounded whatever the transcript.
type fifoMap[K comparable, V any] struct {
	max   int
	m     map[K]fifoEntry[V]
	order []fifoKey[K] // keys by insertion; entries whose gen differs are stale
	head  int
	gen   uint64
}

type fifoEntry[V any] struct {
	v   V
	gen uint64
}

type fifoKey[K comparable] struct {
	k   K
	gen uint64
}

func newFIFOMap[K comparable, V any](max int) *fifoMap[K, V] {
	return &fifoMap[K, V]{max: max, m: map[K]fifoEntry[V]{}}
}

func (f *fifoMap[K, V]) get(k K) (V, bool) {
	e, ok := f.m[k]
	return e.v, ok
}

func (f *fifoMap[K, V]) len() int { return len(f.m) }

// set adds or replaces k; when that makes one key too many, it returns the
// key forgotten and its value.
func (f *fifoMap[K, V]) set(k K, v V) (old K, oldV V, evicted bool) {
	if e, ok := f.m[k]; ok {
		f.m[k] = fifoEntry[V]{v, e.gen}
		return old, oldV, false
	}
	f.gen++
	f.m[k] = fifoEntry[V]{v, f.gen}
	f.order = append(f.order, fifoKey[K]{k, f.gen})
	if len(f.m) > f.max {
		for f.head < len(f.order) {
			o := f.order[f.head]
			f.order[f.head] = fifoKey[K]{}
			f.head++
			if e, ok := f.m[o.k]; ok && e.gen == o.gen {
				delete(f.m, o.k)
				old, oldV, evicted = o.k, e.v, true
				break
			}
		}
	}
	f.compact()
	return old, oldV, evicted
}

func (f *fifoMap[K, V]) delete(k K) {
	delete(f.m, k)
	f.compact()
}

// compact drops the forgotten and stale entries of order once they are
// the larger part of it, so that order stays within about 2×max.
func (f *fifoMap[K, V]) compact() {
	if len(f.order)-f.head <= 2*max(f.max, len(f.m)) && f.head <= len(f.order)/2 {
		return
	}
	live := make([]fifoKey[K], 0, len(f.m))
	for _, o := range f.order[f.head:] {
		if e, ok := f.m[o.k]; ok && e.gen == o.gen {
			live = append(live, o)
		}
	}
	f.order, f.head = live, 0
}

// each calls fn for every key, in no particular order.
func (f *fifoMap[K, V]) each(fn func(K, V)) {
	for k, e := range f.m {
		fn(k, e.v)
	}
}

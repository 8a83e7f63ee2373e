package transcript

import (
	"fmt"
	"testing"
)

// The table forgets its oldest key past its bound, however keys are set,
// reset and deleted, and its bookkeeping stays within a few times the bound.
func TestFIFOMapBounded(t *testing.T) {
	const max = 100
	f := newFIFOMap[string, int](max)
	evictions := 0
	for i := range 100_000 {
		k := fmt.Sprint(i)
		if old, v, ev := f.set(k, i); ev {
			evictions++
			if want := fmt.Sprint(v); v != -1 && old != want {
				t.Fatalf("evicted %q with value %d", old, v)
			}
		}
		if i%3 == 0 {
			f.delete(fmt.Sprint(i - 1))
		}
		f.set(fmt.Sprint(i-2), -1) // resetting may re-add a deleted key
		if f.len() > max {
			t.Fatalf("%d keys, bound %d", f.len(), max)
		}
		if len(f.order)-f.head > 3*max+1 {
			t.Fatalf("order holds %d entries for %d keys", len(f.order)-f.head, f.len())
		}
	}
	if evictions == 0 {
		t.Fatal("nothing was forgotten")
	}
	if _, ok := f.get("99999"); !ok {
		t.Error("the newest key was forgotten")
	}
	if _, ok := f.get("0"); ok {
		t.Error("the oldest key is still there")
	}
}

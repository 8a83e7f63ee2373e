package wire

// Elements calls yield with each element of array, a JSON array that Scan
// found valid, in order, until yield returns false.
func Elements(array []byte, yield func(elem []byte) bool) {
	i := skipWS(array, 0) + 1 // past '['
	for {
		i = skipWS(array, i)
		if i >= len(array) || array[i] == ']' {
			return
		}
		end, _, ok := skipValue(array, i)
		if !ok || !yield(array[i:end]) {
			return
		}
		i = skipWS(array, end)
		if i < len(array) && array[i] == ',' {
			i++
		}
	}
}

// CountElements returns the number of elements of array, a JSON array that
// Scan found valid.
func CountElements(array []byte) int {
	n := 0
	Elements(array, func([]byte) bool { n++; return true })
	return n
}

package wire

// Class is what a JSON-RPC object is to its reader (docs/wire.md §2.2).
type Class uint8

// The classes of an object, decided by its id and method members alone.
const (
	// Unclassified: neither a string or number id nor a string method; a
	// reader drops it.
	Unclassified Class = iota
	// Request: a string or number id and a string method, whatever else
	// (result, error) the object holds.
	Request
	// Response: a string or number id and no string method.
	Response
	// Notification: a string method and no string or number id (null is not
	// an id).
	Notification
)

var classNames = [...]string{"unclassified", "request", "response", "notification"}

// String returns the class's name in lower case, as messages use it.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "Class(?)"
}

// Class classifies the scanned object env. It is the one definition of the
// rule: the rpc reader and the transcript checker both call it.
func (env *Envelope) Class() Class {
	hasID := env.ID.Kind == String || env.ID.Kind == Number
	hasMethod := env.Method.Kind == String
	switch {
	case hasID && hasMethod:
		return Request
	case hasID:
		return Response
	case hasMethod:
		return Notification
	}
	return Unclassified
}

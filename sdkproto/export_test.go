package sdkproto

// Received is the Notification a Client makes of a frame rpc read, for the
// benchmarks of its decoding.
var Received = received

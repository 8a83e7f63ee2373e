package transport

// ServeStream is ServeStdio over the streams and with the grace a test
// gives.
var ServeStream = serveStream

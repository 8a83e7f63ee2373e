// Package transport makes rpc Conns over the usual transports and owns
// what it opens: a Server for every connection of a net.Listener, Dial
// and StartConn for a net.Conn, ServeStdio for the process's own stdin
// and stdout, and StartChild for a child process's.
package transport

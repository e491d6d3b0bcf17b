// Package testport hands tests loopback ports that no outgoing connection can be holding.
package testport

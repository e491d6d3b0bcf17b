// Package mainthread keeps a test binary's main thread for the functions its tests hand it, and away from their goroutines.
package mainthread

// Package priotest holds what tests of lowered threads share.
package priotest

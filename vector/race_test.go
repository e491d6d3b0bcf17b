//go:build race

package vector

// raceEnabled shrinks the slow data-heavy tests under the race detector,
// which instruments the scan loops ~10x.
const raceEnabled = true

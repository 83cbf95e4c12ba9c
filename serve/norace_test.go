//go:build !race

package serve

// raceEnabled tells that the race detector instruments this run.
const raceEnabled = false

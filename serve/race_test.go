//go:build race

package serve

// raceEnabled tells that the race detector instruments this run, which makes serving
// several times slower; the load test then moves fewer bytes through the same concurrency.
const raceEnabled = true

package main

import (
	"regexp"
	"strconv"

	"github.com/urfave/cli/v2"
)

// badFlagValue matches the flag package's errors for a value that does not parse, which say
// only "parse error".
var badFlagValue = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([^:]+): `)

// flagValueError rewrites a flag package error about a value that does not parse into one
// that says what the option takes; ok is false for any other error.
func flagValueError(c *cli.Context, err error) (_ error, ok bool) {
	m := badFlagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return nil, false
	}
	value, name := m[1], m[2]
	var want string
	switch findFlag(c.Command.Flags, name).(type) {
	case *cli.DurationFlag:
		want = "a duration: a number with a unit, such as 30s, 5m or 1h"
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			want = "a duration: give it a unit, e.g. " + value + "m (or " + value + "s, " + value + "h)"
		}
	case *cli.BoolFlag:
		want = "true or false: give --" + name + " to turn it on, --" + name + "=false to turn it off"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		want = "a whole number"
	default:
		return nil, false
	}
	return usagef("%s %q is not %s", optionName(name), value, want), true
}

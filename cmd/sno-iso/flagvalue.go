package main

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/sno-iso/sno-iso/download"
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

// byteUnits are the suffixes parseByteSize takes, binary as their names say; K, M, G and T
// alone mean the same, as in dd and GNU tools.
var byteUnits = []struct {
	suffixes []string
	shift    uint
}{
	{[]string{"TiB", "T"}, 40}, {[]string{"GiB", "G"}, 30}, {[]string{"MiB", "M"}, 20}, {[]string{"KiB", "K"}, 10}, {[]string{"B", ""}, 0},
}

// parseByteSize reads the value of --name: a whole number of bytes, optionally with a unit.
func parseByteSize(name, value string) (int64, error) {
	for _, u := range byteUnits {
		for _, suffix := range u.suffixes {
			digits, ok := strings.CutSuffix(value, suffix)
			if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
				continue
			}
			n, err := strconv.ParseInt(digits, 10, 64)
			if err != nil || n > (1<<62)>>u.shift {
				return 0, usagef("--%s %q is too large", name, value)
			}
			return n << u.shift, nil
		}
	}
	return 0, usagef("--%s %q is not a size: give a whole number of bytes, or one with KiB, MiB, GiB or TiB (e.g. 8GiB)", name, value)
}

// parseRetries reads --fetch-retries as coreos-installer spells it: a count, or infinite.
func parseRetries(value string) (int, error) {
	if value == "infinite" {
		return download.InfiniteRetries, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return 0, usagef("--fetch-retries %q is not a number of retries: give 0 or more, or infinite", value)
	}
	return n, nil
}

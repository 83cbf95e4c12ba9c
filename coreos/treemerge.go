package coreos

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Merging Ignition trees from several sources, with conflicts that name both sources.

// treeMerger merges config trees and remembers which source set each part, for messages.
type treeMerger struct {
	// origin maps a path (segments joined with \x00) to the source that set it first.
	origin map[string]string
}

// pathSegment is an object key, or the key of a keyed list's entry.
type pathSegment struct {
	name  string
	entry bool
}

func displayPath(at []pathSegment) string {
	var b strings.Builder
	for i, s := range at {
		switch {
		case s.entry:
			fmt.Fprintf(&b, "[%q]", s.name)
		case i > 0:
			b.WriteString("." + s.name)
		default:
			b.WriteString(s.name)
		}
	}
	return b.String()
}

func originKey(at []pathSegment) string {
	var b strings.Builder
	for _, s := range at {
		b.WriteString(s.name + "\x00")
	}
	return b.String()
}

func (m *treeMerger) claim(at []pathSegment, source string) {
	m.origin[originKey(at)] = source
}

// originOf is the source that set the deepest part of at that a source set.
func (m *treeMerger) originOf(at []pathSegment) string {
	for n := len(at); n >= 0; n-- {
		if o, ok := m.origin[originKey(at[:n])]; ok {
			return o
		}
	}
	return "an earlier customization"
}

func (m *treeMerger) conflict(at []pathSegment, source string) error {
	first := m.originOf(at)
	if first == source {
		return fmt.Errorf("%s is set twice, differently, in %s: keep one", displayPath(at), source)
	}
	return fmt.Errorf("%s is set differently in %s and in %s: keep one", displayPath(at), first, source)
}

func with(at []pathSegment, s pathSegment) []pathSegment {
	return append(at[:len(at):len(at)], s)
}

// merge merges from (from source) into into and returns the result; into is modified.
func (m *treeMerger) merge(into, from any, at []pathSegment, schema, source string) (any, error) {
	if into == nil {
		m.claim(at, source)
		return from, nil
	}
	switch f := from.(type) {
	case map[string]any:
		i, ok := into.(map[string]any)
		if !ok {
			return nil, m.conflict(at, source)
		}
		keys := make([]string, 0, len(f))
		for k := range f {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, err := m.merge(i[k], f[k], with(at, pathSegment{name: k}), schemaPath(schema, k), source)
			if err != nil {
				return nil, err
			}
			i[k] = v
		}
		return i, nil
	case []any:
		i, ok := into.([]any)
		if !ok {
			return nil, m.conflict(at, source)
		}
		key, keyed := keyedLists[schema]
		for _, e := range f {
			if !keyed {
				if !slices.ContainsFunc(i, func(x any) bool { return equalMeaning(x, e, schema) }) {
					i = append(i, e)
				}
				continue
			}
			k := entryKey(e, key)
			entryAt := with(at, pathSegment{name: k, entry: true})
			idx := slices.IndexFunc(i, func(x any) bool { return entryKey(x, key) == k })
			switch {
			case idx < 0:
				m.claim(entryAt, source)
				i = append(i, e)
			case schema == "passwd.users":
				merged, err := m.merge(i[idx], e, entryAt, schema, source)
				if err != nil {
					return nil, err
				}
				i[idx] = merged
			case !equalMeaning(i[idx], e, schema):
				return nil, m.conflict(entryAt, source)
			}
		}
		return i, nil
	}
	if !equalMeaning(into, from, schema) {
		return nil, m.conflict(at, source)
	}
	return into, nil
}

func equalMeaning(a, b any, schema string) bool {
	return reflect.DeepEqual(canonical(a, schema), canonical(b, schema))
}

// checkPathNamespace refuses one path as two kinds of node (a file and a directory, say).
func (m *treeMerger) checkPathNamespace(tree map[string]any) error {
	storage, _ := tree["storage"].(map[string]any)
	kinds := map[string]string{}
	for _, kind := range []string{"files", "directories", "links"} {
		entries, _ := storage[kind].([]any)
		for _, e := range entries {
			p := entryKey(e, "path")
			if firstKind, seen := kinds[p]; seen {
				at := func(kind string) []pathSegment {
					return []pathSegment{{name: "storage"}, {name: kind}, {name: p, entry: true}}
				}
				return fmt.Errorf("%s is in storage.%s of %s and in storage.%s of %s: keep one",
					p, firstKind, m.originOf(at(firstKind)), kind, m.originOf(at(kind)))
			}
			kinds[p] = kind
		}
	}
	return nil
}

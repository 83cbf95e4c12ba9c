package serve

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
)

// flight is a value made once in the background for every request that needs it while it
// is made: the first request starts it, the others wait for the same result. It runs under
// the server's context, not a request's: one client giving up must not fail it for the
// others.
type flight[T any] struct {
	ready chan struct{} // closed when val and err are set
	val   T
	err   error
}

// wait returns the flight's result, or ctx's error when ctx ends first.
func (f *flight[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-f.ready:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// landed reports whether the result is set.
func (f *flight[T]) landed() bool {
	select {
	case <-f.ready:
		return true
	default:
		return false
	}
}

// flights are the flights of one kind of value, by key: a made value is kept for the next
// requests, a failed one forgotten so that the next request tries again (the cause, a full
// disk say, may pass).
type flights[T any] struct {
	mu sync.Mutex
	m  map[string]*flight[T]
}

// errServerClosed answers a flight asked for once the server is closing.
var errServerClosed = errors.New("the server is shutting down")

// join returns key's flight, starting produce for it when there is none. landing runs under
// the flights' lock once produce returned, before any waiter sees the result; track, when
// not nil, counts the flight until it lands so that closing can wait for it, and refuses it
// once closing began.
func (fs *flights[T]) join(key string, track func() (done func(), ok bool), produce func() (T, error), landing func(T, error)) *flight[T] {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f, ok := fs.m[key]; ok {
		return f
	}
	f := &flight[T]{ready: make(chan struct{})}
	done := func() {}
	if track != nil {
		var ok bool
		if done, ok = track(); !ok {
			f.err = errServerClosed
			close(f.ready)
			return f
		}
	}
	if fs.m == nil {
		fs.m = map[string]*flight[T]{}
	}
	fs.m[key] = f
	go func() {
		defer done()
		val, err := produce()
		fs.mu.Lock()
		defer fs.mu.Unlock()
		f.val, f.err = val, err
		if err != nil {
			delete(fs.m, key)
		}
		if landing != nil {
			landing(val, err)
		}
		close(f.ready)
	}()
	return f
}

// all returns every flight, landed or not.
func (fs *flights[T]) all() []*flight[T] {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Collect(maps.Values(fs.m))
}

// landedLocked calls fn with every value made; the caller holds fs.mu.
func (fs *flights[T]) landedLocked(fn func(T)) {
	for _, f := range fs.m {
		if f.landed() && f.err == nil {
			fn(f.val)
		}
	}
}

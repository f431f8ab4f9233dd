package sensor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// ArticleSensors is the sensors of the article.
var ArticleSensors = []string{"temp", "pres", "hum", "light"}

// A Reading is one value a sensor read.
type Reading struct {
	SensorID string
	Time     time.Time
	Value    int32
}

// Sensors is a set of simulated sensors. Each reads a value when told to,
// and hands it to the streams watching it. It is safe for concurrent use.
type Sensors struct {
	ids     []string
	sensors map[string]*sensor
}

// A sensor is one simulated sensor and its watchers.
type sensor struct {
	id   string
	base int32

	// mu is held while a value is handed to the watchers, so that a
	// watcher added or removed under it sees every value read after, or
	// none.
	mu       sync.Mutex
	reads    int
	last     Reading
	watchers map[*watch]struct{}
}

// bases are the values the article's sensors start from; others start at
// its 50.
var bases = map[string]int32{"temp": 20, "pres": 1013, "hum": 45, "light": 300}

// NewSensors returns the sensors named ids (ArticleSensors if none), each
// with a first reading at start.
func NewSensors(start time.Time, ids ...string) *Sensors {
	if len(ids) == 0 {
		ids = ArticleSensors
	}
	s := &Sensors{ids: slices.Clone(ids), sensors: make(map[string]*sensor, len(ids))}
	for _, id := range ids {
		if _, dup := s.sensors[id]; dup {
			panic(fmt.Sprintf("sensor: %q twice", id))
		}
		base, ok := bases[id]
		if !ok {
			base = 50
		}
		s.sensors[id] = &sensor{id: id, base: base, last: Reading{id, start, base}, watchers: map[*watch]struct{}{}}
	}
	return s
}

// IDs returns the sensors' names, in the order they were given.
func (s *Sensors) IDs() []string { return slices.Clone(s.ids) }

// Tick has every sensor read its next value at time at, in the order of
// IDs, and hand it to the streams watching it; it returns the readings.
// A sensor's values climb by one from its base and start again after ten,
// as the article's do.
//
// A stream that does not keep up holds Tick back (values are never
// dropped, so that tests can count them) until it reads or ends.
func (s *Sensors) Tick(at time.Time) []Reading {
	readings := make([]Reading, 0, len(s.ids))
	for _, id := range s.ids {
		sn := s.sensors[id]
		sn.mu.Lock()
		r := Reading{id, at, sn.base + int32(sn.reads%10) + 1}
		sn.publish(r)
		sn.mu.Unlock()
		readings = append(readings, r)
	}
	return readings
}

// Record has sensor id read value at time at, and hand it to the streams
// watching it: a value a test can tell from any other.
func (s *Sensors) Record(id string, value int32, at time.Time) error {
	sn, ok := s.sensors[id]
	if !ok {
		return fmt.Errorf("sensor: no sensor %q", id)
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.publish(Reading{id, at, value})
	return nil
}

// Run ticks every interval, at the real time, until ctx ends.
func (s *Sensors) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			s.Tick(now)
		case <-ctx.Done():
			return
		}
	}
}

// Watchers returns how many streams watch sensor id.
func (s *Sensors) Watchers(id string) int {
	sn, ok := s.sensors[id]
	if !ok {
		return 0
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return len(sn.watchers)
}

// publish makes r the last reading and hands it to every watcher. It is
// called with mu held.
func (sn *sensor) publish(r Reading) {
	sn.reads++
	sn.last = r
	for w := range sn.watchers {
		w.put(event{reading: r})
	}
}

// read returns the last reading.
func (sn *sensor) read() Reading {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return sn.last
}

// watch adds w to the watchers and queues answer on w under the same
// lock, so that the answer comes before the first value w gets. It
// reports false if w has stopped.
func (sn *sensor) watch(w *watch, answer event) bool {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.watchers[w] = struct{}{}
	return w.put(answer)
}

// unwatch removes w: once it returns, w gets no more of the sensor's
// values.
func (sn *sensor) unwatch(w *watch) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	delete(sn.watchers, w)
}

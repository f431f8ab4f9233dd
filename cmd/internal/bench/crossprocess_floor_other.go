//go:build !linux

package bench

import (
	"errors"
	"testing"
)

var errNoFloor = errors.New("the floors between processes are measured on Linux only")

func floorSocketpairClients(testing.TB, servers) (clients, error) { return clients{}, errNoFloor }
func floorRingClients(testing.TB, servers) (clients, error)       { return clients{}, errNoFloor }
func serveFloorSocketpair() (func(), error)                       { return nil, errNoFloor }
func serveFloorRing() (func(), error)                             { return nil, errNoFloor }

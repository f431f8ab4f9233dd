// Package matrix is the table of localgrpc measure.
//
// A row is a [Pairing]: a client stack calling a server stack on an
// address of a kind. [Pairings] gives the rows that servers allow.
// A [Measurement] holds a result per row and method.
// It writes them as markdown tables, a markdown page or CSV.
package matrix

package matrix

import (
	"fmt"
	"io"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/report"
)

// PageTitle opens the page WritePage writes.
const PageTitle = "# localgrpc measure\n\n"

// WritePage writes a whole markdown page: its title, how and when it was
// made, what measure measures, then WriteMarkdown's tables.
func (m Measurement) WritePage(out io.Writer, command string, at time.Time) error {
	if _, err := fmt.Fprintf(out, "%sMade by %s on %s.\n\n%s\n\n", PageTitle, report.EscapeMarkdown(command), at.UTC().Format(time.DateOnly), report.EscapeMarkdown(About)); err != nil {
		return err
	}
	return m.WriteMarkdown(out)
}

// About says what measure measures, in a paragraph.
// WritePage writes it, and measure --help says it in its own words.
const About = "The Echo API (Get, Expand, Collect, Update) served on grpc-go and on connect-go, " +
	"on TCP, a unix socket, an abstract socket and in-process, and grpc-go's on shm:, " +
	"called by every client that can call each server: grpc-go, and connect-go in the Connect, gRPC and gRPC-Web protocols. " +
	"Each cell is one run of many calls, so differences under about 30% are noise: rerun before trusting a ranking."

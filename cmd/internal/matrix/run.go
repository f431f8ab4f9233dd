package matrix

import (
	"context"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/load"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// Progress hears of each cell as Run measures it.
// A cell is numbered row × len(echoclient.Methods) + method.
type Progress interface {
	Start(cell int, row Pairing, m echoclient.Method)
	Done(cell int, r load.Result)
}

// Run measures every method of every row of m, in order.
// It makes its calls as m.Conditions say, with the client dial gives for
// each row, which it closes after the row.
// It fills m.Results, and stops early at the end of ctx, setting
// m.Interrupted.
// Its error is dial's.
func (m *Measurement) Run(ctx context.Context, dial func(Pairing) (echoclient.Client, error), p Progress) error {
	c := m.Conditions
	m.Results = make([][]load.Result, len(m.Rows))
	for i, row := range m.Rows {
		client, err := dial(row)
		if err != nil {
			return err
		}
		for j, meth := range echoclient.Methods {
			if ctx.Err() != nil {
				m.Interrupted = true
				break
			}
			reqs := echoclient.Repeated(meth, c.Message, c.Count)
			cell := i*len(echoclient.Methods) + j
			p.Start(cell, row, meth)
			r := c.Load.Run(ctx, func(ctx context.Context) error {
				return client.Call(ctx, meth, echoclient.List(reqs), func(*echov1.EchoResponse) error { return nil })
			})
			if r.TakeCancelled(ctx); r.Calls < c.Load.N {
				m.Interrupted = true
			}
			m.Results[i] = append(m.Results[i], r)
			p.Done(cell, r)
		}
		client.Close()
	}
	return nil
}

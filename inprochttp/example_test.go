package inprochttp_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/localgrpc/localgrpc/inprochttp"
)

// Calling a handler in-process: it reads the request as the client sends
// it, streams its answer, and sets a trailer, as over HTTP/2.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /upper", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		for word := range strings.FieldsSeq(string(body)) {
			fmt.Fprintln(w, strings.ToUpper(word))
			w.(http.Flusher).Flush() // the client reads each line as it is written
		}
		w.Header().Set(http.TrailerPrefix+"Words", fmt.Sprint(len(strings.Fields(string(body)))))
	})
	client := &http.Client{Transport: inprochttp.NewTransport(mux)}

	resp, err := client.Post("http://inproc/upper", "text/plain", strings.NewReader("hello in-process world"))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body) // the trailers arrive with the body's end
	if err != nil {
		panic(err)
	}
	fmt.Print(resp.Proto, " ", resp.Status, "\n", string(body))
	fmt.Println("words:", resp.Trailer.Get("Words"))
	// Output:
	// HTTP/2.0 200 OK
	// HELLO
	// IN-PROCESS
	// WORLD
	// words: 3
}

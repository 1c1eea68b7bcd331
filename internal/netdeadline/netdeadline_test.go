package netdeadline

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestTransport: a server that stalls before its headers, stalls in the
// body, or trickles below the minimum rate is cut off with ErrStalled; a
// server that keeps sending is read to the end.
func TestTransport(t *testing.T) {
	defer func(r int64) { minRate = r }(minRate)
	minRate = 1000
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("start"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/trickle", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 1000 && r.Context().Err() == nil; i++ {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond) // 20 B/s, under the 1000 B/s allowed
		}
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("y", 100))) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &http.Client{Transport: Transport(nil, 200*time.Millisecond)}
	patient := &http.Client{Transport: Transport(nil, time.Second)} // only the budget can end it
	for _, tc := range []struct {
		path   string
		client *http.Client
		want   string
	}{
		{"/headers", client, "no response within 200ms"},
		{"/body", client, "no data for 200ms after 5 bytes"},
		{"/trickle", patient, "slower than the 0 KiB/s allowed on average"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := tc.client.Get(srv.URL + tc.path)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("GET %s = %v, want ErrStalled containing %q", tc.path, err, tc.want)
			}
		})
	}
	resp, err := client.Get(srv.URL + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != 100 {
		t.Fatalf("GET /ok = %d bytes, %v", len(b), err)
	}
}

func TestBudget(t *testing.T) {
	if got, want := Budget(5*time.Second, 1<<30), 5*time.Second+1024*time.Second; got != want {
		t.Errorf("Budget(5s, 1 GiB) = %s, want %s", got, want)
	}
}

// TestSlowDripStartsAtIdle: a server that sends a byte every 100ms, never
// silent for the idle timeout, is cut off for its rate soon after the
// idle timeout (the rate check waited a fixed minute before), with the
// default minimum rate.
func TestSlowDripStartsAtIdle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}))
	defer srv.Close()
	// The client's own timeout only stops a test that would never end.
	client := &http.Client{Transport: Transport(nil, 400*time.Millisecond), Timeout: 15 * time.Second}
	resp, err := client.Get(srv.URL)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "slower than the 1024 KiB/s allowed") {
		t.Fatalf("GET of a slow drip with a 400ms idle timeout = %v, want ErrStalled for the rate", err)
	}
}

// TestProgress: a body that goes quiet is reported once half the idle
// timeout has passed, naming what is waited on.
func TestProgress(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("abc"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	notes := make(chan string, 4)
	client := &http.Client{Transport: Transport(nil, 400*time.Millisecond, WithProgress(func(f string, a ...any) { notes <- fmt.Sprintf(f, a...) }))}
	resp, err := client.Get(srv.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	select {
	case n := <-notes:
		if !strings.Contains(n, "waiting on GET "+srv.URL+"/slow: nothing received for 200ms (3 bytes so far") {
			t.Errorf("progress = %q", n)
		}
	default:
		t.Error("no progress reported for a body quiet past half its idle timeout")
	}
}

// TestUploadStall: a server that stops reading an upload — its socket
// buffers fill and the transport blocks in a write no header timeout
// covers — fails the request with ErrStalled naming the upload; one that
// reads it all and answers succeeds, and the retry body (GetBody) is
// watched too.
func TestUploadStall(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/deaf", func(w http.ResponseWriter, r *http.Request) {
		select { // reads nothing of the body
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d", n)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// Before srv.Close, which waits for the handlers: a handler that reads
	// no body does not see its client leave.
	defer close(release)
	client := &http.Client{Transport: Transport(nil, 300*time.Millisecond)}
	const size = 256 << 20 // more than any socket buffer
	body := func() io.Reader { return io.LimitReader(zeros{}, size) }

	req, err := http.NewRequest(http.MethodPut, srv.URL+"/deaf", body())
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	_, err = client.Do(req)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "PUT "+srv.URL+"/deaf: the server took no data for 300ms") {
		t.Fatalf("PUT to a server that reads nothing: %v, want ErrStalled naming the upload", err)
	}

	req, err = http.NewRequest(http.MethodPut, srv.URL+"/ok", strings.NewReader(strings.Repeat("z", 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != fmt.Sprint(1<<20) {
		t.Fatalf("PUT of 1 MiB: server read %q (%v), want %d", got, err, 1<<20)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

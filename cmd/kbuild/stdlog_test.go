package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestUnsolicitedResponseQuiet: a server whose body runs past its
// Content-Length makes Go's HTTP client log the extra bytes (16 KB of
// noise before kbuild's message); through stdlogFilter nothing of it is
// printed, while other log lines pass, cut.
func TestUnsolicitedResponseQuiet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				c.Read(buf)
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok%s", strings.Repeat("lie", 6000))
				c.Read(buf)
			}()
		}
	}()
	defer log.SetOutput(log.Writer())
	lie := func(w io.Writer) {
		log.SetOutput(w)
		client := &http.Client{Transport: &http.Transport{}}
		resp, err := client.Get("http://" + ln.Addr().String() + "/x")
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		client.Get("http://" + ln.Addr().String() + "/y") // the idle connection reads the rest
		client.CloseIdleConnections()
	}
	var raw, out bytes.Buffer
	lie(&raw)
	if !strings.Contains(raw.String(), "Unsolicited response") {
		t.Fatalf("Go's client no longer logs a lying Content-Length (%q): this test tests nothing", raw.String())
	}
	lie(stdlogFilter{&out})
	if out.Len() != 0 {
		t.Errorf("the standard logger printed %d bytes: %.200s", out.Len(), out.String())
	}
	log.Print(strings.Repeat("z", 5000))
	if got := out.String(); !strings.Contains(got, strings.Repeat("z", 100)) || len(got) > maxLogLine+100 {
		t.Errorf("another log line came out as %d bytes", len(got))
	}
}

package mcptool

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/specd/specd/core"
)

// oversizeLine replaces a stdio message over the cap: it is not JSON, so
// mcp-go's stdio server answers it with a JSON-RPC parse error (-32700, id
// null) and reads on.
const oversizeLine = "specd: message over the size cap dropped\n"

// StdioInput wraps the stdin of mcp-go's stdio server, which reads one
// JSON-RPC message per line with no bound. It guarantees:
//
//   - a line longer than maxBytes is never held in memory: it is read and
//     dropped in bounded chunks up to its newline and replaced by one
//     unparseable line, so the client gets a parse error and the next line
//     is served as usual (logged at warn with the dropped size);
//   - a numeric request id mcp-go would not echo as sent (1e309,
//     100000000000000000000000, 1.0) becomes a surrogate string id, which
//     StdioOutput turns back into the literal in the answer, and the
//     requestId of a notifications/cancelled naming such an id becomes the
//     same surrogate, so the cancel finds the call;
//   - number literals float64 cannot hold (1e309) become the marked strings
//     of core.MarkUnrepresentableNumbers, so they reach the validator and get
//     an INVALID_FORMAT envelope rather than a JSON-RPC error;
//   - every other line passes through unchanged.
//
// Only the input is wrapped: server→client messages are untouched.
func StdioInput(r io.Reader, maxBytes int, log *slog.Logger) io.Reader {
	if log == nil {
		log = slog.Default()
	}
	return &stdioInput{r: bufio.NewReaderSize(r, 64<<10), max: maxBytes, log: log}
}

type stdioInput struct {
	r       *bufio.Reader
	max     int
	log     *slog.Logger
	pending []byte
	err     error
}

// Read returns the next bytes of the input, without the lines over the cap.
func (s *stdioInput) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.pending, s.err = s.nextLine()
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// nextLine reads one line (with its newline, if any) and the error that
// ended it.
func (s *stdioInput) nextLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(line)+len(chunk) > s.max {
			dropped := int64(len(line) + len(chunk))
			line = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = s.r.ReadSlice('\n')
				dropped += int64(len(chunk))
			}
			s.log.Warn("dropped a JSON-RPC message over the size cap", "bytes", dropped, "cap_bytes", s.max)
			return []byte(oversizeLine), err
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line, _ = wrapRequestID(line)
		return core.MarkUnrepresentableNumbers(line), err
	}
}

// HTTPInput wraps the streamable HTTP handler, which reads a POST body whole
// with no bound. A body over maxBytes is refused with 413 and a JSON-RPC parse
// error without reading the rest; a numeric request id mcp-go would not echo
// as sent is replaced and restored in the answer (a cancel naming it is
// replaced the same way), and number literals
// float64 cannot hold are marked, as on stdio (StdioInput, StdioOutput);
// everything else passes through unchanged. A response-v2 tool answer is
// written into the response without mcp-go re-encoding it (answerWriter;
// the bytes are the same).
func HTTPInput(next http.Handler, maxBytes int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(maxBytes)))
			if err != nil {
				status, msg := http.StatusBadRequest, "Parse error: "+err.Error()
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("Parse error: the message is over the %d-byte cap", maxBytes)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				quoted, _ := json.Marshal(msg)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":%s}}`+"\n", quoted)
				return
			}
			aw := &answerWriter{ResponseWriter: w}
			body, aw.ids = wrapRequestID(body)
			body = core.MarkUnrepresentableNumbers(body)
			r = r.WithContext(withAnswerWriter(r.Context(), aw))
			aw.body.Reset(body)
			r.Body = &aw.body
			r.ContentLength = int64(len(body))
			w = aw
		}
		next.ServeHTTP(w, r)
	})
}

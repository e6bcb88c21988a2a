-- wrk script: the seeds' HTTP benchmark request, NetCoreServer's HttpTraceClient's TRACE with an
-- empty body (wrk writes "Content-Length: 0" for the empty body), plus the Host header wrk always
-- sends (HTTP/1.1 requires it: Kestrel answers 400 without it). The server sends the request head
-- back as a message/http body.
wrk.method = "TRACE"
wrk.body = ""

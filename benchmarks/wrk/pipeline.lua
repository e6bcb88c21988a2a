-- wrk script: HTTP/1.1 pipelining. Each connection writes DEPTH requests at once (default 16:
-- `wrk ... -s pipeline.lua -- 16`), then writes the next batch when all DEPTH answers are in.
-- wrk counts every answer as a request; a latency is the time from the batch's write to that answer.
-- The request is wrk's own (method, path and headers from the command line, Host included).
local depth = 16

function init(args)
  depth = tonumber(args[1]) or depth
  local batch = {}
  for i = 1, depth do
    batch[i] = wrk.format()
  end
  request_batch = table.concat(batch)
end

function request()
  return request_batch
end

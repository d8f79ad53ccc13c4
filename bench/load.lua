-- wrk script: rotate over the URLs in $LOAD_URLS (one path a line), count statuses per thread,
-- and print one JSON line of totals and latency percentiles when the run is done.
-- With LOAD_ONCE=1 each URL is asked at most once: thread k of n takes the k-th, (k+n)-th, ...
-- paths from the first, and counts the requests past its share (`repeated`) instead of
-- asking a path twice unnoticed.
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  paths = {}
  for line in io.lines(os.getenv("LOAD_URLS")) do
    if #line > 0 then table.insert(paths, line) end
  end
  once = os.getenv("LOAD_ONCE") == "1"
  stride = tonumber(os.getenv("LOAD_THREADS") or "1")
  if once then
    index = id + 1 - stride
  else
    -- each thread starts at a different place in the rotation
    index = math.random(#paths)
  end
  ok = 0
  not_ok = 0
  issued = 0
  repeated = 0
  bad = {}
end

function request()
  if once then
    index = index + stride
    issued = issued + 1
    if index > #paths then
      repeated = repeated + 1
    end
    current = (index - 1) % #paths + 1
  else
    index = index % #paths + 1
    current = index
  end
  return wrk.format("GET", paths[current])
end

function response(status, headers, body)
  if status >= 200 and status < 300 then
    ok = ok + 1
  else
    not_ok = not_ok + 1
    local key = tostring(status) .. " " .. paths[current]
    bad[key] = (bad[key] or 0) + 1
  end
end

function done(summary, latency, requests)
  local total_ok, total_not_ok, examples = 0, 0, {}
  local most_issued, total_repeated = 0, 0
  for _, thread in ipairs(threads) do
    total_ok = total_ok + thread:get("ok")
    total_not_ok = total_not_ok + thread:get("not_ok")
    most_issued = math.max(most_issued, thread:get("issued"))
    total_repeated = total_repeated + thread:get("repeated")
    for key, count in pairs(thread:get("bad")) do
      table.insert(examples, string.format("%q", key))
    end
  end
  local errors = summary.errors
  io.write(string.format(
    'LOAD_RESULT {"requests": %d, "duration_s": %.3f, "ok_2xx": %d, "non_2xx": %d, ' ..
    '"connect_errors": %d, "read_errors": %d, "write_errors": %d, "timeouts": %d, ' ..
    '"p50_ms": %.2f, "p90_ms": %.2f, "p99_ms": %.2f, "max_ms": %.2f, ' ..
    '"paths_used": %d, "repeated": %d, "non_2xx_examples": [%s]}\n',
    summary.requests, summary.duration / 1e6, total_ok, total_not_ok,
    errors.connect, errors.read, errors.write, errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    most_issued * #threads, total_repeated,
    table.concat(examples, ", ", 1, math.min(#examples, 10))))
end

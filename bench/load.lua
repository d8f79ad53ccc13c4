-- wrk script: rotate over the URLs in $LOAD_URLS (one path a line), count statuses per thread,
-- and print one JSON line of totals and latency percentiles when the run is done.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  paths = {}
  for line in io.lines(os.getenv("LOAD_URLS")) do
    if #line > 0 then table.insert(paths, line) end
  end
  -- each thread starts at a different place in the rotation
  index = math.random(#paths)
  ok = 0
  not_ok = 0
  bad = {}
end

function request()
  index = index % #paths + 1
  return wrk.format("GET", paths[index])
end

function response(status, headers, body)
  if status >= 200 and status < 300 then
    ok = ok + 1
  else
    not_ok = not_ok + 1
    local key = tostring(status) .. " " .. paths[index]
    bad[key] = (bad[key] or 0) + 1
  end
end

function done(summary, latency, requests)
  local total_ok, total_not_ok, examples = 0, 0, {}
  for _, thread in ipairs(threads) do
    total_ok = total_ok + thread:get("ok")
    total_not_ok = total_not_ok + thread:get("not_ok")
    for key, count in pairs(thread:get("bad")) do
      table.insert(examples, string.format("%q", key))
    end
  end
  local errors = summary.errors
  io.write(string.format(
    'LOAD_RESULT {"requests": %d, "duration_s": %.3f, "ok_2xx": %d, "non_2xx": %d, ' ..
    '"connect_errors": %d, "read_errors": %d, "write_errors": %d, "timeouts": %d, ' ..
    '"p50_ms": %.2f, "p90_ms": %.2f, "p99_ms": %.2f, "max_ms": %.2f, "non_2xx_examples": [%s]}\n',
    summary.requests, summary.duration / 1e6, total_ok, total_not_ok,
    errors.connect, errors.read, errors.write, errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    table.concat(examples, ", ", 1, math.min(#examples, 10))))
end

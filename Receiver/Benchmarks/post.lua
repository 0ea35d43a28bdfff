-- wrk script: POSTs the bodies of a JSON Lines corpus (one postback body per line, as Benchmarks/make-corpus.py
-- writes them: Apple's bytes, the kid escaped `\/`) to the receiver, in order.
-- Usage: wrk ... -s post.lua URL -- CORPUS [PATH] [first|random]
--   first (default): from the corpus's first line, so that a run over a corpus longer than it sends no line twice
--   but for the corpus's own retries; random: from a random line (a cycled corpus).
local requests = {}
local position = 0

function init(args)
  local corpus = args[1]
  local path = args[2] or "/.well-known/appattribution/report-attribution/"
  for line in io.lines(corpus) do
    if #line > 0 then
      requests[#requests + 1] = wrk.format("POST", path, { ["Content-Type"] = "application/json" }, line)
    end
  end
  if args[3] == "random" then
    math.randomseed(os.time() + (wrk.thread and tonumber(tostring(wrk.thread):match("0x(%x+)") or "0", 16) or 0))
    position = math.random(#requests) - 1
  end
end

function request()
  position = position % #requests + 1
  return requests[position]
end

local non200 = 0
function response(status, headers, body)
  if status ~= 200 then non200 = non200 + 1 end
end

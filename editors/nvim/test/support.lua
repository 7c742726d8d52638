-- Helpers of the headless Neovim scripts (e2e.lua, measured.lua): a
-- message on stderr, a failed check as an error, and a required variable
-- of the environment. Loaded with `dofile` from the script's own folder.
local M = {}

--- A logger that writes `[TAG] msg` lines on stderr.
function M.logger(tag)
  return function(msg)
    io.stderr:write('[' .. tag .. '] ' .. msg .. '\n')
  end
end

--- Raises `msg` unless `cond` holds.
function M.check(cond, msg)
  if not cond then
    error(msg, 0)
  end
end

--- The value of the environment variable `name`; an error if unset.
function M.env(name)
  local v = os.getenv(name)
  M.check(v and v ~= '', name .. ' is not set')
  return v
end

return M

-- Headless probe of what a Neovim user sees after a run on real Legion,
-- run by tests/tests/nvim_e2e.rs as
--
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile editors/nvim/test/measured.lua'
--
-- with MAPWRIGHT_SERVER (the binary), MAPWRIGHT_E2E_FILE (circuit's mapper
-- in a project whose mapwright.toml says `runtime = "legion"`),
-- MAPWRIGHT_E2E_LINE (the 0-based line of its IndexTaskMap statement) and
-- MAPWRIGHT_E2E_OUT (where the findings go). It runs the mapper with
-- :MapperRun's function, then reads the code lenses the plugin shows (the
-- lens list and the virtual text on the statement's line) and the hover on
-- `calculate_new_currents`, and writes them to the output file for the
-- test to check. Any failure ends Neovim with exit code 1 and a message.
-- Only Neovim 0.7 APIs are used.

local TIMEOUT = tonumber(os.getenv('MAPWRIGHT_E2E_TIMEOUT_MS') or '') or 30000
-- A first run may build the mapper and the programs.
local RUN_TIMEOUT = 240000

local support = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'support.lua')
local log, check, env = support.logger('nvim-measured'), support.check, support.env

local function run()
  local server = env('MAPWRIGHT_SERVER')
  local file = env('MAPWRIGHT_E2E_FILE')
  local line = tonumber(env('MAPWRIGHT_E2E_LINE'))
  local out = env('MAPWRIGHT_E2E_OUT')

  local mapwright = require('mapwright')
  mapwright.setup({ cmd = { server, 'lsp' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.wait(TIMEOUT, function()
    return mapwright.client(bufnr) ~= nil
  end, 20), 'no mapwright client attached')
  local client = mapwright.client(bufnr)

  -- 1. Run it, as :MapperRun does.
  local done, result, failure = false, nil, nil
  mapwright.execute('mapwright.run', bufnr, function(err, res)
    done, result, failure = true, res, err
  end)
  check(vim.wait(RUN_TIMEOUT, function()
    return done
  end, 50), 'the run did not end within ' .. RUN_TIMEOUT .. ' ms')
  check(not failure, 'the run failed: ' .. vim.inspect(failure))
  check(result and result.status == 'ok', 'run status: ' .. vim.inspect(result and result.status))
  log('run: ' .. tostring(mapwright.last and mapwright.last.text))

  -- 2. The lenses the plugin asked for after the command, as data and as
  -- the virtual text on the statement's line.
  local titles = {}
  check(vim.wait(TIMEOUT, function()
    titles = {}
    for _, lens in ipairs(vim.lsp.codelens.get(bufnr) or {}) do
      if lens.command and lens.range.start.line == line then
        table.insert(titles, lens.command.title)
      end
    end
    return #titles > 0
  end, 50), 'no code lens on line ' .. (line + 1))
  local shown = {}
  local namespaces = vim.lsp.codelens.__namespaces or {}
  local ns = namespaces[client.id]
  if ns then
    for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, { line, 0 }, { line, -1 }, { details = true })) do
      for _, chunk in ipairs(mark[4].virt_text or {}) do
        table.insert(shown, chunk[1])
      end
    end
  end

  -- 3. Hover on the task name.
  local text = vim.api.nvim_buf_get_lines(bufnr, line, line + 1, false)[1]
  local col = text:find('calculate_new_currents', 1, true)
  check(col, 'no calculate_new_currents on line ' .. (line + 1))
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = line, character = col + 2 },
  }, TIMEOUT)
  local hover = ''
  for _, response in pairs(responses or {}) do
    check(not response.err, 'hover error: ' .. vim.inspect(response.err))
    local contents = response.result and response.result.contents
    if type(contents) == 'table' then
      hover = hover .. (contents.value or '')
    end
  end

  local f = assert(io.open(out, 'w'))
  f:write('--- lenses\n' .. table.concat(titles, '\n') .. '\n')
  f:write('--- virtual text\n' .. table.concat(shown, '') .. '\n')
  f:write('--- hover\n' .. hover .. '\n')
  f:close()
  log('ok: ' .. #titles .. ' lenses on line ' .. (line + 1))
end

local ok, err = pcall(run)
if not ok then
  log('FAIL: ' .. tostring(err))
  vim.cmd('cquit 1')
else
  vim.cmd('qall!')
end

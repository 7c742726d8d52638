-- Headless end-to-end check of the Neovim plugin against the real server,
-- run by tests/tests/nvim_e2e.rs as
--
--   nvim --headless --clean --cmd 'set rtp^=editors/nvim' -c 'luafile editors/nvim/test/e2e.lua'
--
-- with MAPWRIGHT_SERVER (the binary), MAPWRIGHT_E2E_FILE (a mapper file with
-- one error; it is edited in place) and MAPWRIGHT_E2E_CODE (the expected
-- diagnostic code). It checks filetype detection and syntax highlighting,
-- waits for the server's diagnostic, applies its quick fix through the
-- client (textDocument/codeAction + vim.lsp.util.apply_workspace_edit),
-- waits for the diagnostics to clear, formats the buffer, writes it and
-- quits. Any failure ends Neovim with exit code 1 and a message on stderr.
-- Only Neovim 0.7 APIs are used (Debian's Neovim is 0.7).

local TIMEOUT = tonumber(os.getenv('MAPWRIGHT_E2E_TIMEOUT_MS') or '') or 30000

local support = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'support.lua')
local log, check, env = support.logger('nvim-e2e'), support.check, support.env

local function fail(msg)
  log('FAIL: ' .. msg)
  vim.cmd('cquit 1')
end

--- The buffer's diagnostics as LSP diagnostics (with the server's `data`),
--- the way Neovim 0.7's own code-action request builds them.
local function lsp_diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    -- Columns are byte columns; the fixtures are ASCII, where they equal
    -- UTF-16 positions.
    local lsp = vim.tbl_extend('keep', {
      range = {
        start = { line = d.lnum, character = d.col },
        ['end'] = { line = d.end_lnum, character = d.end_col },
      },
      severity = d.severity,
      message = d.message,
      source = d.source,
      code = d.code,
    }, d.user_data and d.user_data.lsp or {})
    table.insert(out, lsp)
  end
  return out
end

local function run()
  log('Neovim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor) .. '.' .. tostring(vim.version().patch))
  local server = env('MAPWRIGHT_SERVER')
  local file = env('MAPWRIGHT_E2E_FILE')
  local code = env('MAPWRIGHT_E2E_CODE')

  -- Filetype detection (before setup, so that these buffers start no server).
  for _, name in ipairs({ 'a.mapper', 'mappings', 'circuit_mappings', 'b.mappings' }) do
    vim.cmd('edit ' .. vim.fn.fnameescape(vim.fn.tempname() .. '-dir/' .. name))
    check(vim.bo.filetype == 'mapper', name .. ': filetype is "' .. vim.bo.filetype .. '"')
    vim.cmd('bwipeout!')
  end
  check(vim.fn.exists(':MapperOptimize') == 2, ':MapperOptimize is not defined')
  check(vim.fn.exists(':MapperRun') == 2, ':MapperRun is not defined')
  check(vim.fn.exists(':MapperExplain') == 2, ':MapperExplain is not defined')

  local mapwright = require('mapwright')
  mapwright.setup({ cmd = { server, 'lsp' }, settings = { app = 'circuit' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.bo[bufnr].filetype == 'mapper', 'the file is not detected as mapper')
  local group = vim.fn.synIDattr(vim.fn.synID(1, 1, 1), 'name')
  check(group == 'mapperStatement', 'syntax group at 1:1 is "' .. group .. '"')

  -- 1. The diagnostic, from the real server.
  local ok = vim.wait(TIMEOUT, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 20)
  local client = mapwright.client(bufnr)
  check(client, 'no mapwright client attached')
  check(ok, 'no diagnostics within ' .. TIMEOUT .. ' ms')
  local diags = lsp_diagnostics(bufnr)
  for _, d in ipairs(diags) do
    log(string.format('diagnostic %s at %d:%d: %s', tostring(d.code), d.range.start.line + 1, d.range.start.character + 1, d.message))
  end
  local target
  for _, d in ipairs(diags) do
    if d.code == code then
      target = d
    end
  end
  check(target, 'no ' .. code .. ' diagnostic')
  check(target.source == 'mapwright', 'diagnostic source is ' .. tostring(target.source))

  -- 2. Its quick fix, through the client.
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = target.range,
    context = { diagnostics = { target }, only = { 'quickfix' } },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, TIMEOUT)
  check(responses, 'codeAction request timed out')
  local actions = {}
  for _, response in pairs(responses) do
    check(not response.err, 'codeAction error: ' .. vim.inspect(response.err))
    for _, action in ipairs(response.result or {}) do
      -- Neovim advertises codeAction resolveSupport for `edit`: the server
      -- leaves the edit out, and resolving fills it in (as
      -- vim.lsp.buf.code_action does before applying).
      if not action.edit and action.data then
        local resolved = vim.lsp.buf_request_sync(bufnr, 'codeAction/resolve', action, TIMEOUT)
        for _, r in pairs(resolved or {}) do
          check(not r.err, 'codeAction/resolve error: ' .. vim.inspect(r.err))
          action = r.result or action
        end
      end
      table.insert(actions, action)
    end
  end
  local chosen
  for _, action in ipairs(actions) do
    log('code action: ' .. tostring(action.title) .. (action.isPreferred and ' (preferred)' or ''))
    if action.edit and (not chosen or (action.isPreferred and not chosen.isPreferred)) then
      chosen = action
    end
  end
  check(chosen, 'no quick fix with an edit among ' .. #actions .. ' actions')
  log('applying: ' .. chosen.title)
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)

  -- 3. The server sees the fixed text: its diagnostics clear.
  ok = vim.wait(TIMEOUT, function()
    return #vim.diagnostic.get(bufnr) == 0
  end, 20)
  check(ok, 'diagnostics did not clear after the fix: ' .. vim.inspect(vim.tbl_map(function(d)
    return d.message
  end, vim.diagnostic.get(bufnr))))

  -- 4. Format through the client (formatting_sync on 0.7), write, quit.
  mapwright.format(bufnr, TIMEOUT)
  vim.cmd('write')
  log('ok: ' .. file)
end

local ok, err = pcall(run)
if not ok then
  fail(tostring(err))
else
  vim.cmd('qall!')
end

-- User commands of the mapwright plugin; the server starts with
-- `require('mapwright').setup{...}` (see editors/nvim/README.md).
if vim.g.loaded_mapwright then
  return
end
vim.g.loaded_mapwright = true

local function command(name, server_command, desc)
  vim.api.nvim_create_user_command(name, function()
    require('mapwright').execute(server_command, 0)
  end, { desc = desc })
end

command('MapperOptimize', 'mapwright.optimize', 'Mapper: optimize this mapper (applies the best version in place)')
command('MapperRun', 'mapwright.run', 'Mapper: run this mapper once and show the result')
command('MapperExplain', 'mapwright.explain', 'Mapper: explain the mapping decisions')
vim.api.nvim_create_user_command('MapperRestart', function()
  require('mapwright').restart()
end, { desc = 'Mapper: restart the language server' })

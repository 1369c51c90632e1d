-- The help file: :helptags accepts it (no duplicate tags), every |link| outside code blocks resolves
-- (to this file or Neovim's help), and :help finds the plugin's tags.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  local source = vim.fs.joinpath(T.plugin, 'doc', 'rag_lsp.txt')
  local copy = vim.fn.tempname()
  vim.fn.mkdir(vim.fs.joinpath(copy, 'doc'), 'p')
  local lines = vim.fn.readfile(source)
  vim.fn.writefile(lines, vim.fs.joinpath(copy, 'doc', 'rag_lsp.txt'))
  vim.opt.rtp:prepend(copy)
  vim.cmd('helptags ' .. vim.fn.fnameescape(vim.fs.joinpath(copy, 'doc')))
  local tags = vim.fn.readfile(vim.fs.joinpath(copy, 'doc', 'tags'))
  T.set('tags', #tags)

  local links, missing, in_code = {}, {}, false
  for _, line in ipairs(lines) do
    if in_code and (line:match('^<') or line:match('^%S')) then
      in_code = false
    end
    if not in_code then
      for link in line:gmatch('|([^|%s]+)|') do
        links[link] = true
      end
    end
    if line:match('%s>%a*$') or line:match('^>%a*$') then
      in_code = true
    end
  end
  for link in pairs(links) do
    if not pcall(vim.cmd.help, link) then
      missing[#missing + 1] = link
    end
  end
  table.sort(missing)
  T.set('links', vim.tbl_count(links))
  T.set('missing', missing)
  T.set('line_too_long', vim.tbl_filter(function(line)
    return vim.fn.strdisplaywidth(line) > 78
  end, lines))

  vim.cmd.help('rag_lsp.completion_context()')
  T.set('help_buffer', vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t'))
end, 20000)

--- Showing answers: the quickfix list, a scratch buffer with the readable block, the status float.
local config = require('rag_lsp.config')
local render = require('rag_lsp.render')

local M = {}

local function notify(msg, level)
  vim.notify('rag_lsp: ' .. msg, level or vim.log.levels.INFO)
end
M.notify = notify

--- The last answer shown (for scripts and tests): { title, result }.
M.last = nil

local SCRATCH_NAME = 'rag-lsp://context'

--- Jump from a line of the scratch buffer to the place whose header is at or above it.
local function jump_from_scratch(buf)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local places = vim.b[buf].rag_lsp_places or {}
  local target
  for _, place in ipairs(places) do
    if place.row <= row then
      target = place
    end
  end
  if not target then
    return
  end
  vim.cmd('wincmd p')
  vim.cmd.edit(vim.fn.fnameescape(target.filename))
  vim.api.nvim_win_set_cursor(0, { target.lnum, 0 })
end

--- Show the readable block in the scratch buffer `rag-lsp://context` (reused), in a split.
function M.scratch(title, result)
  local lines = { '# ' .. title, '' }
  local places = {}
  local block = render.block(result)
  local rank = 0
  for _, line in ipairs(block) do
    if line:match('^%d+%. ') then
      rank = rank + 1
      local item = result.items[rank]
      places[#places + 1] = { row = #lines + 1, filename = render.filename(item, result),
                               lnum = render.val(item.focus_line) or item.start_line }
    end
    lines[#lines + 1] = line
  end
  local buf = vim.fn.bufnr(SCRATCH_NAME)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, SCRATCH_NAME)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'ragcontext'
    vim.keymap.set('n', '<CR>', function()
      jump_from_scratch(buf)
    end, { buffer = buf, desc = 'rag_lsp: open the place under the cursor' })
    vim.keymap.set('n', 'q', '<cmd>close<CR>', { buffer = buf, desc = 'rag_lsp: close' })
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.b[buf].rag_lsp_places = places
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  end
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
  return buf
end

--- Show a ragLsp/context answer: the quickfix list (opened unless `open_quickfix = false`), and the
--- scratch buffer when `opts.scratch` (or the `scratch` option) is true.
function M.present(title, result, opts)
  opts = opts or {}
  M.last = { title = title, result = result }
  local items = render.qf_items(result)
  local summary = render.summary(result)
  vim.fn.setqflist({}, ' ', {
    title = title .. ' — ' .. render.short_summary(result),
    items = items,
    context = { rag_lsp = true },
  })
  local scratch = opts.scratch
  if scratch == nil then
    scratch = config.options.scratch
  end
  if config.options.open_quickfix and #items > 0 then
    local current = vim.api.nvim_get_current_win()
    vim.cmd('botright copen ' .. math.min(10, math.max(4, 2 * #items + 1)))
    vim.api.nvim_set_current_win(current)
  end
  if scratch then
    M.scratch(title, result)
  end
  if #items == 0 then
    notify(title .. ': no matching places (' .. summary .. ')', vim.log.levels.WARN)
  end
end

--- Show the status: a floating window, or echoed lines.
function M.status(status, style)
  local lines = render.status_lines(status)
  M.last_status = lines
  if (style or config.options.status) == 'echo' then
    vim.api.nvim_echo(
      vim.tbl_map(function(line)
        return { line .. '\n' }
      end, lines),
      true,
      {}
    )
    return nil
  end
  local _, win = vim.lsp.util.open_floating_preview(lines, 'text', {
    border = 'rounded',
    title = ' rag-lsp ',
    focus_id = 'rag_lsp_status',
    close_events = { 'CursorMoved', 'BufHidden', 'InsertCharPre' },
  })
  return win
end

--- Report a failed request.
function M.error(what, err)
  local message = type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err)
  notify(what .. ' failed: ' .. message, vim.log.levels.ERROR)
end

return M

-- related_papers as it was before the tf-idf change (main at 5aa161f), for bench/related.py
with recursive
source as (
  select rowid as paper_rowid, lower(coalesce(title, '') || ' ' || abstract_text) || ' ' as body
  from papers
  where id = :paper_id
),
letters(position, word, finished) as (
  select 1, '', null
  union all
  select letters.position + 1,
    case when substr(body, letters.position, 1) glob '[a-z0-9]'
      or unicode(substr(body, letters.position, 1)) > 127
      then word || substr(body, letters.position, 1)
      else '' end,
    case when substr(body, letters.position, 1) glob '[a-z0-9]'
      or unicode(substr(body, letters.position, 1)) > 127
      then null
      else word end
  from letters, source
  where letters.position <= min(length(body), 20000)
),
words as (
  select distinct finished as word
  from letters
  where length(finished) > 2
),
counted as materialized (
  -- documents per word, capped: a common word costs 1,000 index entries, not its
  -- whole doclist (the fts5vocab table counts every document of a term)
  select word,
    (
      select count(*)
      from (
        select 1
        from papers_fts
        where papers_fts match '"' || words.word || '"'
        limit 1000
      )
    ) as documents
  from words
),
distinctive as (
  select word, documents
  from counted
  where documents > 1
    and documents < 1000
    and not exists (
      select 1
      from counted as shorter
      where shorter.documents = counted.documents
        and length(shorter.word) < length(counted.word)
        and substr(counted.word, 1, length(shorter.word)) = shorter.word
    )
  order by documents, word
  limit 8
),
input as (
  select coalesce(group_concat('"' || word || '"', ' OR '), '""') as expression
  from distinctive
),
ranked as (
  select rowid, bm25(papers_fts, 10.0, 4.0, 1.0) as score
  from papers_fts
  where papers_fts match (select expression from input)
  order by score
  limit 21
)
select papers.id, papers.label, papers.track, papers.authors, round(-ranked.score, 3) as score
from ranked
join papers on papers.rowid = ranked.rowid
where papers.rowid != (select paper_rowid from source)
order by ranked.score
limit 20

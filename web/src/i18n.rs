//! UI texts in English and Russian. Texts the engine writes (check
//! observations, example rationales) come already in the chosen language.

use medallion_protocol::Lang;

/// The UI text for `key` in `lang`; the key itself if unknown (visible in review).
pub fn t(lang: Lang, key: &str) -> &'static str {
    let (en, ru) = match key {
        "app_title" => ("Medallion Playground", "Medallion Playground"),
        "tagline" => ("bronze → silver → gold, live in your browser", "bronze → silver → gold вживую в браузере"),
        "pipeline" => ("Pipeline", "Пайплайн"),
        "bronze_hint" => ("append-only", "только добавление"),
        "silver_hint" => ("cleaned by the rule registry", "очищено реестром правил"),
        "gold_hint" => ("SQL over silver", "SQL поверх silver"),
        "rows" => ("rows", "строк"),
        "add_file" => ("Add file…", "Добавить файл…"),
        "drop_here" => ("drop CSV / JSON / Parquet here", "перетащите CSV / JSON / Parquet"),
        "checkpoints" => ("checkpoints", "чекпойнтов"),
        "rules" => ("Rule registry", "Реестр правил"),
        "rules_hint" => (
            "Applied in order: filters → normalizations → enrichments → expectations. Each rule has an action for the rows that fail it: warn, drop (quarantine) or fail (stop the update). Edit an expression and everything downstream recomputes.",
            "Порядок: фильтры → нормализация → обогащение → ожидания. У каждого правила есть действие для строк, которые его не прошли: warn, drop (в карантин) или fail (остановить обновление). Измените выражение — всё ниже пересчитается.",
        ),
        "export_md" => ("Export as markdown", "Экспорт в markdown"),
        "checks" => ("Quality checks", "Проверки качества"),
        "row" => ("Row level", "Строки"),
        "schema" => ("Schema level", "Схема"),
        "aggregate" => ("Aggregate level", "Агрегаты"),
        "filter" => ("filter", "фильтр"),
        "normalize" => ("normalize", "нормализация"),
        "enrich" => ("enrich", "обогащение"),
        "expect" => ("expectation", "ожидание"),
        "mode_mixed" => ("as each table defines", "как задано для каждой таблицы"),
        "gold_sql_shortcut" => ("Gold model SQL (the anti-pattern is on: bronze may be read)", "SQL gold-модели (анти-паттерн включён: можно читать bronze)"),
        "type_error" => ("not a type; the rule keeps its type", "не тип; у правила остаётся прежний тип"),
        "gold_merge_hint" => (
            "each refresh MERGEs the query's rows into the table on these keys: other rows stay",
            "каждое обновление делает MERGE строк запроса в таблицу по этим ключам: остальные строки остаются",
        ),
        "reads_bronze" => ("reads bronze (anti-pattern)", "читает bronze (анти-паттерн)"),
        "rule_runs" => ("failed / checked in the last runs, newest first:", "не прошли / проверено в последних запусках, новые сверху:"),
        "released_rows" => ("more in history (closed by later runs)", "ещё в истории (закрыты последующими запусками)"),
        "instructor" => ("Instructor mode", "Режим преподавателя"),
        "instructor_hint" => (
            "Larger type for a projector and the anti-patterns lab up front; everything works by keyboard (Tab, Space, Enter)",
            "Крупный шрифт для проектора и лаборатория антипаттернов впереди; всё доступно с клавиатуры (Tab, пробел, Enter)",
        ),
        "lab_title" => ("Anti-patterns lab", "Лаборатория антипаттернов"),
        "lab_intro" => (
            "Switch an anti-pattern of the course on: the same bronze input is run twice, correctly (this session) and with the anti-pattern (a twin that is never saved), and the difference is shown below. Then fire an event a real pipeline meets.",
            "Включите антипаттерн из курса: тот же вход bronze прогоняется дважды — правильно (эта сессия) и с антипаттерном (двойник, который не сохраняется), — а разница показана ниже. Затем запустите событие, которое встречает настоящий пайплайн.",
        ),
        "lab_dedup" => ("dropDuplicates at ingest", "dropDuplicates при загрузке"),
        "lab_dedup_hint" => (
            "Bronze keeps only the first record of each business key. The Kafka re-delivery and the CDC history of a key are gone before silver sees them; nobody can tell what the source sent.",
            "Bronze хранит только первую запись каждого бизнес-ключа. Повторная доставка Kafka и CDC-история ключа исчезают до silver; что прислал источник, уже не узнать.",
        ),
        "lab_filter" => ("Business logic in bronze: a filter at ingest", "Бизнес-логика в bronze: фильтр при загрузке"),
        "lab_filter_hint" => (
            "Bronze stores only the records silver's rules would pass, as a WHERE status = 'OK' at ingest would. The rejected ones exist nowhere: no quarantine, no audit, no replay after a rule changes.",
            "Bronze сохраняет только записи, которые пропустили бы правила silver, как сделал бы WHERE status = 'OK' при загрузке. Отброшенных нет нигде: ни карантина, ни аудита, ни replay после смены правила.",
        ),
        "health_title" => ("Five signs of a healthy medallion (seed 003 §8)", "Пять признаков здорового медальона (seed 003 §8)"),
        "health_bronze_keeps_everything" => ("Bronze never loses data", "Bronze никогда не теряет данные"),
        "health_nothing_reads_bronze" => ("Nothing reads bronze for analytics", "Никто не читает bronze для аналитики"),
        "health_gold_speaks_business" => ("Gold speaks business language", "Gold говорит на языке бизнеса"),
        "health_gold_rebuildable" => ("Every gold can be rebuilt by replay", "Любой gold пересобирается через replay"),
        "health_lineage_known" => ("Lineage is known for every table", "Lineage известен для каждой таблицы"),
        "lab_overwrite" => ("OVERWRITE of a partition", "OVERWRITE партиции"),
        "lab_overwrite_hint" => (
            "A new batch replaces the day's earlier batches (mode(\"overwrite\")). Their records are gone, and so are time travel to their versions and the replay of that day.",
            "Новый батч заменяет более ранние батчи того же дня (mode(\"overwrite\")). Их записей больше нет, как и time travel к их версиям и replay этого дня.",
        ),
        "lab_dropmalformed" => ("DROPMALFORMED at ingest", "DROPMALFORMED при загрузке"),
        "lab_dropmalformed_hint" => (
            "Records that do not fit the declared schema are dropped instead of kept with their reason. Silver looks clean because the evidence never landed.",
            "Записи, не подходящие к объявленной схеме, отбрасываются, а не сохраняются с причиной. Silver выглядит чистым, потому что улики так и не попали в bronze.",
        ),
        "lab_join" => ("JOIN at ingest", "JOIN при загрузке"),
        "lab_join_hint" => (
            "The bronze job joins each record with a lookup and stores the looked-up columns in it, as the lookup stood then. When the lookup changes, yesterday's bronze keeps the old values and a replay of the ingest would store new ones.",
            "Bronze-джоба соединяет каждую запись со справочником и сохраняет в ней его колонки, какими они были в тот момент. Когда справочник меняется, вчерашний bronze хранит старые значения, а replay загрузки записал бы новые.",
        ),
        "lab_fixjob" => ("UPDATE / DELETE of raw records", "UPDATE / DELETE сырых записей"),
        "lab_fixjob_hint" => (
            "A weekly \"fix\" job rewrites bronze after gold was published: a negative amount loses its minus, other rejected records are deleted. A replay no longer gives the published gold, and what the source sent is gone.",
            "Еженедельная джоба «исправления» переписывает bronze после публикации gold: у отрицательной суммы убирается минус, прочие отклонённые записи удаляются. Replay больше не даёт опубликованный gold, а присланного источником больше нет.",
        ),
        "lab_weekly_delete" => ("Weekly DELETE of a customer", "Еженедельный DELETE клиента"),
        "lab_weekly_delete_hint" => (
            "Security's weekly DELETE FROM bronze WHERE user_id = ? as a routine batch: bronze becomes mutable, the published gold cannot be rebuilt, the customer's history is gone for every purpose. The PII panel shows the right ways.",
            "Еженедельный DELETE FROM bronze WHERE user_id = ? от безопасника как плановый батч: bronze становится изменяемым, опубликованный gold не пересобрать, история клиента потеряна для всех целей. Правильные способы — в панели PII.",
        ),
        "lab_shortcut" => ("The shortcut: two gold models read bronze", "Shortcut: две gold-модели читают bronze"),
        "lab_shortcut_hint" => (
            "Two gold models skip silver and clean bronze their own way (distinct payloads; the newest record per key with amount > 0). Their totals of the same measure drift apart as dirty records arrive (send a business error or re-send a file), and nobody can tell which dashboard is right.",
            "Две gold-модели минуют silver и чистят bronze каждая по-своему (различные payload; последняя запись ключа с amount > 0). Их итоги одной и той же меры расходятся, когда приходят грязные записи (пришлите бизнес-ошибку или файл повторно), и никто не скажет, какая витрина права.",
        ),
        "lab_insert" => ("INSERT instead of MERGE", "INSERT вместо MERGE"),
        "lab_insert_hint" => (
            "Silver appends each run's rows instead of merging them by key. One run looks right; when the orchestrator re-runs the job, silver holds every row twice and gold revenue doubles.",
            "Silver дописывает строки каждого запуска вместо MERGE по ключу. Один запуск выглядит верно; когда оркестратор перезапускает джобу, в silver каждая строка дважды, а выручка в gold удваивается.",
        ),
        "lab_monolithic" => ("Monolithic silver: one job for every table", "Монолитный silver: одна джоба на все таблицы"),
        "lab_monolithic_hint" => (
            "Every silver table is built by one job, like a silver.everything with all the JOINs: when one table's job fails, nothing is refreshed and every gold model waits. Fire \"A silver job fails halfway\" to see it.",
            "Все таблицы silver строит одна джоба, как silver.everything со всеми JOIN-ами: когда падает джоба одной таблицы, не обновляется ничего и ждёт каждая gold-модель. Нажмите «Джоба silver падает на полпути», чтобы это увидеть.",
        ),
        "lab_terms" => ("Terms used here", "Термины"),
        "lab_term_twin" => ("Twin", "Двойник"),
        "lab_term_twin_def" => ("A throw-away copy of your session, built from the same bronze with the anti-patterns on; your session stays correct", "Одноразовая копия вашей сессии, собранная из того же bronze с включёнными антипаттернами; ваша сессия остаётся правильной"),
        "lab_term_merge" => ("MERGE (upsert)", "MERGE (upsert)"),
        "lab_term_merge_def" => ("Writes a row by its key: a new key is inserted, a known key updates its row. The same input merged twice gives the same table", "Записывает строку по ключу: новый ключ добавляется, известный обновляет свою строку. Тот же вход, слитый дважды, даёт ту же таблицу"),
        "lab_term_insert" => ("INSERT", "INSERT"),
        "lab_term_insert_def" => ("Appends rows without looking at keys: the same input inserted twice is there twice", "Дописывает строки, не глядя на ключи: тот же вход, вставленный дважды, окажется в таблице дважды"),
        "lab_term_idempotent" => ("Idempotent", "Идемпотентность"),
        "lab_term_idempotent_def" => ("Running a job again on the same input changes nothing: the property that makes re-runs safe", "Повторный запуск джобы на том же входе ничего не меняет: свойство, которое делает перезапуски безопасными"),
        "lab_term_at_least_once" => ("At-least-once", "At-least-once"),
        "lab_term_at_least_once_def" => ("Delivery that never loses a message but may repeat one (Kafka after a crash, an orchestrator's retry): the pipeline must take repeats once", "Доставка, которая не теряет сообщений, но может их повторить (Kafka после сбоя, повтор оркестратора): пайплайн должен учитывать повтор один раз"),
        "lab_term_watermark" => ("Watermark", "Watermark"),
        "lab_term_watermark_def" => ("The newest _ingest_ts a run has processed: an incremental run reads only what landed after it", "Самый поздний _ingest_ts, который обработал запуск: инкрементальный запуск читает только то, что пришло после него"),
        "lab_term_scd" => ("SCD type 1 / 2", "SCD type 1 / 2"),
        "lab_term_scd_def" => ("A slowly changing dimension: type 1 keeps only the current row of a key, type 2 keeps every version with valid_from / valid_to", "Медленно меняющееся измерение: type 1 хранит только текущую строку ключа, type 2 — каждую версию с valid_from / valid_to"),
        "lab_term_quarantine" => ("Quarantine", "Карантин"),
        "lab_term_quarantine_def" => ("Where silver puts the records its rules reject, with the rule and the reason, so the data owner can fix them; nothing is dropped silently", "Куда silver кладёт записи, отклонённые правилами, с правилом и причиной, чтобы владелец данных их исправил; ничего не теряется молча"),
        "lab_term_replay" => ("Replay", "Replay"),
        "lab_term_replay_def" => ("Rebuilding silver and gold from bronze alone: possible only while bronze holds everything the source sent, unchanged", "Пересборка silver и gold только из bronze: возможна, пока bronze хранит всё, что прислал источник, без изменений"),
        "lab_term_time_travel" => ("Time travel / version", "Time travel / версия"),
        "lab_term_time_travel_def" => ("Every write makes a new version of a table; reading an old version shows the table as it was then", "Каждая запись создаёт новую версию таблицы; чтение старой версии показывает таблицу такой, какой она была тогда"),
        "lab_term_lineage" => ("Lineage", "Lineage"),
        "lab_term_lineage_def" => ("Where each table's rows come from: which bronze records, through which rules", "Откуда строки каждой таблицы: из каких записей bronze и через какие правила"),
        "lab_events" => ("Events", "События"),
        "lab_ev_rerun_job" => ("The orchestrator re-runs the job", "Оркестратор перезапускает джобу"),
        "lab_ev_rerun_job_hint" => (
            "At-least-once: the same job runs again on the same input, in this session and in the twin",
            "At-least-once: та же джоба снова запускается на том же входе — в этой сессии и в двойнике",
        ),
        "lab_ev_rerun_job_done" => ("The orchestrator re-ran the job", "Оркестратор перезапустил джобу"),
        "lab_ev_resend_file" => ("The source re-sends its file", "Источник присылает файл повторно"),
        "lab_ev_resend_file_hint" => ("The newest landed file arrives again, byte for byte, as a new batch", "Последний файл из landing zone приходит снова, байт в байт, новым батчем"),
        "lab_ev_resend_file_done" => ("The source re-sent its file", "Источник повторно прислал файл"),
        "lab_ev_kafka_redelivery" => ("The Kafka consumer crashes before commit", "Консьюмер Kafka падает до коммита"),
        "lab_ev_kafka_redelivery_hint" => ("The last micro-batch was written to bronze but its offsets were not committed: it is delivered again", "Последний микробатч записан в bronze, но смещения не закоммичены: он приходит снова"),
        "lab_ev_kafka_redelivery_done" => ("The Kafka consumer crashed before commit", "Консьюмер Kafka упал до коммита"),
        "lab_ev_schema_drift" => ("The source renames and adds a column", "Источник переименовывает и добавляет колонку"),
        "lab_ev_schema_drift_hint" => ("Schema drift: the newest records again with a declared column renamed (amount → amount_v2 where there is one) and a new source_version field", "Дрейф схемы: последние записи снова, объявленная колонка переименована (amount → amount_v2, где она есть), добавлено поле source_version"),
        "lab_ev_schema_drift_done" => ("The source changed its schema", "Источник изменил схему"),
        "lab_ev_business_error" => ("A business error: amount = -100", "Бизнес-ошибка: amount = -100"),
        "lab_ev_business_error_hint" => ("The newest record again with its amount at -100: the data owner fixes it, from the quarantine", "Последняя запись снова, с суммой -100: исправляет владелец данных, из карантина"),
        "lab_ev_business_error_done" => ("A business error arrived", "Пришла бизнес-ошибка"),
        "lab_ev_technical_failure" => ("A technical failure: 503 halfway", "Техническая ошибка: 503 на полпути"),
        "lab_ev_technical_failure_hint" => ("The object store answers 503 while the newest file is written again: nothing becomes visible, and the platform's retry succeeds", "Хранилище отвечает 503 во время повторной записи последнего файла: ничего не становится видимым, а повтор платформы проходит"),
        "lab_ev_technical_failure_done" => ("A technical failure, then the retry", "Техническая ошибка, затем повтор"),
        "lab_ev_late_records" => ("Late records after the watermark", "Опоздавшие записи после watermark"),
        "lab_ev_late_records_hint" => ("The newest records again, dated three days back, arrive now: the watermark is on _ingest_ts, so the job still takes them", "Последние записи снова, датированные тремя днями раньше, приходят сейчас: watermark стоит по _ingest_ts, поэтому джоба их всё равно берёт"),
        "lab_ev_late_records_done" => ("Late records arrived", "Пришли опоздавшие записи"),
        "lab_ev_dimension_change" => ("A dimension changes: a customer moves", "Измерение меняется: клиент переезжает"),
        "lab_ev_dimension_change_hint" => ("The source of a looked-up table sends its newest record again with one looked-up field changed, the same key (a slowly changing dimension)", "Источник справочника присылает последнюю запись снова с изменённым полем и тем же ключом (медленно меняющееся измерение)"),
        "lab_ev_dimension_change_done" => ("A dimension changed", "Измерение изменилось"),
        "lab_ev_silver_job_fails" => ("A silver job fails halfway", "Джоба silver падает на полпути"),
        "lab_ev_silver_job_fails_hint" => ("New records arrive, and the job of one silver table fails on the next run (once): what does not read that table should still be refreshed", "Приходят новые записи, и джоба одной таблицы silver падает при следующем запуске (один раз): то, что эту таблицу не читает, всё равно должно обновиться"),
        "lab_ev_silver_job_fails_done" => ("A silver job failed", "Джоба silver упала"),
        "lab_reset_hint" => (
            "Switch every anti-pattern off and clear the timeline; what the events sent stays in your session (reload the scenario to start clean)",
            "Выключить все антипаттерны и очистить хронологию; то, что прислали события, остаётся в сессии (перезагрузите сценарий, чтобы начать с чистого листа)",
        ),
        "lab_reset" => ("Reset to the correct pipeline", "Вернуть правильный пайплайн"),
        "lab_correct" => ("Correct", "Правильно"),
        "lab_anti" => ("With the anti-pattern", "С антипаттерном"),
        "lab_table" => ("Table (rows)", "Таблица (строк)"),
        "lab_checks" => ("Checks that differ", "Проверки, которые расходятся"),
        "lab_changed_rows" => ("rows differ", "строк различаются"),
        "lab_changed_row" => ("row differs", "строка различается"),
        "lab_changed_rows_few" => ("rows differ", "строки различаются"),
        "lab_no_row" => ("(no such row)", "(нет такой строки)"),
        "lab_timeline" => ("Timeline", "Хронология"),
        "shortcut_switch" => ("Anti-pattern: let gold read bronze (the shortcut)", "Анти-паттерн: разрешить gold читать bronze (shortcut)"),
        "shortcut_hint" => (
            "Instructors: switch on to show what goes wrong when gold skips silver: duplicates and rejected records count in business figures, and every model repeats silver's logic.",
            "Для преподавателя: включите, чтобы показать, что ломается, когда gold минует silver: дубли и отклонённые записи попадают в бизнес-цифры, а каждая модель повторяет логику silver.",
        ),
        "shortcut_confirm" => (
            "Switch on the anti-pattern \"gold reads bronze\"? Gold models may then read raw bronze tables.",
            "Включить анти-паттерн «gold читает bronze»? Тогда gold-модели смогут читать сырые таблицы bronze.",
        ),
        "shortcut_warning" => ("Anti-pattern on: this model reads bronze, so duplicates and rejected records count:", "Анти-паттерн включён: модель читает bronze, поэтому дубли и отклонённые записи учитываются:"),
        "merge_hint" => (
            "written by business key: duplicates removed, later states replace earlier ones (SCD1) or are kept as versions (SCD2); rerunning changes nothing",
            "запись по бизнес-ключу: дубли удаляются, новые состояния заменяют старые (SCD1) или хранятся версиями (SCD2); повторный запуск ничего не меняет",
        ),
        "append_label" => ("appended (no key)", "добавление (без ключа)"),
        "trail_title" => ("Row trail", "Происхождение строки"),
        "trail_hint" => ("click a row to see where it came from", "нажмите на строку, чтобы увидеть её происхождение"),
        "trail_records" => (
            "Bronze records behind this row, with every rule's outcome (re-run now with the current rules):",
            "Записи bronze, из которых получена строка, и что с ними сделало каждое правило (пересчитано сейчас с текущими правилами):",
        ),
        "trail_silver" => ("Silver rows this gold row was computed from:", "Строки silver, из которых посчитана эта строка gold:"),
        "role_kept" => ("this row", "эта строка"),
        "role_duplicate" => ("duplicate", "дубль"),
        "role_superseded" => ("older state", "прежнее состояние"),
        "role_deleted" => ("deleted", "удалена"),
        "role_quarantined" => ("quarantined", "в карантине"),
        "failing_rows" => ("sample of violating rows", "пример нарушающих строк"),
        "check_trail" => ("status in the last runs, oldest first", "статус в последних запусках, от старых к новым"),
        "severity_warn_hint" => ("severity warn: a violation warns instead of failing", "severity warn: нарушение — предупреждение, а не провал"),
        "failed" => ("failed", "не прошли"),
        "warned" => ("warned", "предупреждений"),
        "on_failure" => ("on failure", "при нарушении"),
        "action_warn" => ("warn: keep the row, count it", "warn: оставить строку, посчитать"),
        "action_drop" => ("drop: to quarantine", "drop: в карантин"),
        "action_fail" => ("fail: stop the update", "fail: остановить обновление"),
        "cast_type" => ("type", "тип"),
        "cast_hint" => (
            "the value must convert to this type exactly (DECIMAL(10,2), INT, DATE…); empty: no conversion",
            "значение должно точно приводиться к этому типу (DECIMAL(10,2), INT, DATE…); пусто — без приведения",
        ),
        "rejected" => ("rejected", "отклонено"),
        "changed" => ("changed", "изменено"),
        "null_in" => ("NULL in", "NULL в"),
        "no_match" => ("no match or NULL", "без пары или NULL"),
        "off" => ("off", "выкл"),
        "enabled" => ("on", "вкл"),
        "showing" => ("showing", "строки"),
        "of" => ("of", "из"),
        "prev" => ("← Previous", "← Назад"),
        "next" => ("Next →", "Вперёд →"),
        "batches" => ("Batch log", "Журнал батчей"),
        "batch" => ("batch", "батч"),
        "file" => ("file", "файл"),
        "format" => ("format", "формат"),
        "records" => ("records", "записей"),
        "ingested" => ("ingested", "загружен"),
        "gold_sql" => ("Gold model SQL (reads silver only)", "SQL gold-модели (только из silver)"),
        "recomputed" => ("recomputed in", "пересчитано за"),
        "ms" => ("ms", "мс"),
        "mb" => ("MB", "МБ"),
        "kb" => ("KB", "КБ"),
        "bytes_unit" => ("B", "Б"),
        "stale" => (
            "The pipeline has errors (listed here, and marked at their rule or model): each silver table they stop, and what reads it, shows its last good version; every other table is up to date (silver tables are independent jobs).",
            "В пайплайне ошибки (перечислены здесь и отмечены у правила или модели): каждая остановленная ими таблица silver и всё, что её читает, показывают последнюю успешную версию; остальные таблицы актуальны (таблицы silver — независимые джобы).",
        ),
        "stale_gold" => (
            "A gold model has an error (listed here, and marked on its card): it shows its last good result; bronze and silver are up to date.",
            "В gold-модели ошибка (указана здесь и отмечена на карточке): она показывает последний успешный результат; bronze и silver актуальны.",
        ),
        "loading" => ("Loading the example and running the pipeline…", "Загружаем пример и запускаем пайплайн…"),
        "loading_engine" => ("Loading the pipeline engine…", "Загружаем движок пайплайна…"),
        "starting_engine" => ("Starting the pipeline engine…", "Запускаем движок пайплайна…"),
        "working" => ("Working…", "Выполняется…"),
        "sending_file" => ("Handing to the engine:", "Передаём движку:"),
        "cancelled" => (
            "Cancelled: nothing of it was kept (the tables are as before)",
            "Отменено: ничего из этого не сохранено (таблицы как прежде)",
        ),
        "restoring" => ("Cancelled; restoring the tables as they were…", "Отменено; восстанавливаем таблицы как были…"),
        "discard_unsaved" => (
            "{n} change(s) made in this tab are not in the saved session and will be discarded. Go on?",
            "Изменения, сделанные в этой вкладке ({n}), не сохранены и будут потеряны. Продолжить?",
        ),
        "not_saved_erased" => (
            "Records were erased: the saved copy of this session (with the files as dropped) was deleted; changes from now on are not saved",
            "Записи удалены: сохранённая копия сессии (с файлами как были загружены) удалена; дальнейшие изменения не сохраняются",
        ),
        "saved_erased" => (
            "Records were erased: the files as dropped were deleted from this browser; the lake saved here holds no erased record and is still saved after every change",
            "Записи удалены: файлы в исходном виде удалены из браузера; сохранённое здесь озеро не содержит удалённых записей и по-прежнему сохраняется после каждого изменения",
        ),
        "locked_loading" => ("A scenario is loading: its tables show while its versions are written", "Сценарий загружается: таблицы уже видны, их версии записываются"),
        "refused_restoring" => ("The tables are being restored: try again in a moment", "Таблицы восстанавливаются: повторите через минуту"),
        "refused_read_only" => (
            "This tab does not own the saved session: take over to make changes",
            "Сессией владеет другая вкладка: нажмите «Перехватить», чтобы вносить изменения",
        ),
        "restoring_saved" => ("Restoring your saved session…", "Восстанавливаем сохранённую сессию…"),
        "restart_engine" => ("Restart the engine", "Перезапустить движок"),
        "saved" => ("Saved in this browser", "Сохранено в браузере"),
        "saved_hint" => (
            "Every change is saved in this browser: a reload, or closing and reopening the tab, brings back the same tables, versions, quarantine history and rules.",
            "Каждое изменение сохраняется в браузере: после перезагрузки или повторного открытия вкладки вернутся те же таблицы, версии, история карантина и правила.",
        ),
        "start_fresh" => ("Start fresh", "Начать заново"),
        "start_fresh_confirm" => (
            "Start fresh? Everything saved in this browser (files, versions, rule edits) is deleted and the default example opens.",
            "Начать заново? Всё сохранённое в браузере (файлы, версии, правки правил) будет удалено, откроется пример по умолчанию.",
        ),
        "read_only" => (
            "Read-only: another tab owns this session. This tab shows it as it was when opened and does not follow that tab's changes",
            "Только чтение: сессией владеет другая вкладка. Здесь она показана такой, какой была при открытии, и не обновляется вслед за той вкладкой",
        ),
        "take_over" => ("Take over", "Перехватить"),
        "take_over_hint" => (
            "Reload this tab as the owner: it shows the latest saved state and the other tab becomes read-only",
            "Перезагрузить эту вкладку владельцем: она покажет последнее сохранённое состояние, а другая вкладка станет только для чтения",
        ),
        "taken_over" => (
            "Another tab took this session over: this tab is read-only now and no longer follows it",
            "Другая вкладка перехватила сессию: эта вкладка теперь только для чтения и за ней не следит",
        ),
        "owner_left" => (
            "The tab that owned this session was closed or reloaded: this tab still shows it as it was when opened",
            "Вкладка-владелец сессии закрыта или перезагружена: здесь сессия по-прежнему показана такой, какой была при открытии",
        ),
        "owner_left_hint" => (
            "Reload this tab: it opens the latest saved state, as the owner if no other tab has taken the session",
            "Перезагрузить вкладку: откроется последнее сохранённое состояние, с правом изменений, если сессию не заняла другая вкладка",
        ),
        "cancelled_taken_over" => (
            "Another tab took this session over: this change was stopped and nothing of it was kept (the other tab has the saved session without it)",
            "Другая вкладка перехватила сессию: это изменение остановлено, из него ничего не сохранено (у той вкладки сохранённая сессия без него)",
        ),
        "erased_since" => ("erased since", "удалено позже"),
        "no_records" => ("it holds no record (see its note in the batch log)", "в нём нет ни одной записи (см. примечание в журнале батчей)"),
        "erased_records" => ("erased", "удалено"),
        "landed_erased" => ("landed file deleted", "исходный файл удалён"),
        "landed_erased_hint" => (
            "A right-to-be-forgotten request erased records of this file: the file as received was deleted, so it cannot be read again",
            "Запрос на забвение удалил записи этого файла: файл в исходном виде удалён, прочитать его заново нельзя",
        ),
        "locked_hint" => (
            "Read-only tab: another tab owns this session. Take over (top bar) to make changes here",
            "Вкладка только для чтения: сессией владеет другая вкладка. Чтобы вносить изменения, нажмите «Перехватить» вверху",
        ),
        "reload_hint" => (
            "Reload this tab to see the latest saved state (still read-only)",
            "Перезагрузить вкладку, чтобы увидеть последнее сохранённое состояние (по-прежнему только чтение)",
        ),
        "reload_page" => ("Reload", "Перезагрузить"),
        "restore_problem" => (
            "The saved session was not restored exactly (press Start fresh to begin again); this step failed this time:",
            "Сохранённая сессия восстановлена не точно (нажмите «Начать заново», чтобы начать сначала); этот шаг на этот раз не удался:",
        ),
        "storage_full" => (
            "Browser storage is full: the session goes on in this tab, but the last change and the ones after it are not saved (a reload returns to the state before them)",
            "Хранилище браузера заполнено: сессия продолжается в этой вкладке, но последнее изменение и следующие не сохранены (после перезагрузки — состояние до них)",
        ),
        "not_saved" => (
            "Not saved in this browser: changes from now on are kept in this tab only (a reload returns to the last saved state)",
            "Не сохраняется в браузере: дальнейшие изменения остаются только в этой вкладке (после перезагрузки — последнее сохранённое состояние)",
        ),
        "progress_reading" => ("Reading", "Читаем"),
        "progress_downloading" => ("Downloading", "Скачиваем"),
        "progress_records" => ("records", "записей"),
        "progress_parsing" => ("Reading with the declared schema", "Читаем по объявленной схеме"),
        "progress_rule" => ("rule", "правило"),
        "progress_model" => ("Building", "Строим"),
        "progress_writing" => ("Writing", "Записываем"),
        "progress_saving" => ("Saving the session in this browser: file", "Сохраняем сессию в браузере: файл"),
        "close" => ("Close", "Закрыть"),
        "copy_hint" => ("Select and copy:", "Выделите и скопируйте:"),
        "lookup" => ("LEFT JOIN", "LEFT JOIN"),
        "params" => ("parameters", "параметры"),
        "lang_switch" => ("Русский", "English"),
        "quarantine_hint" => ("rejected rows, with rule id and reason", "отклонённые строки с id правила и причиной"),
        "ingest_ok" => ("appended as a new batch", "добавлен как новый батч"),
        "reload" => ("Reload example", "Перезагрузить пример"),
        "example" => ("Scenario", "Сценарий"),
        "choose_scenario" => ("Choose a scenario…", "Выберите сценарий…"),
        "no_scenario" => (
            "No scenario is loaded. Choose one in the list at the top to start.",
            "Сценарий не загружен. Выберите его в списке вверху, чтобы начать.",
        ),
        "confirm_example" => (
            "Open this scenario? Everything in the current one (dropped files, rule edits, versions) is replaced.",
            "Открыть этот сценарий? Всё в текущем (загруженные файлы, правки правил, версии) будет заменено.",
        ),
        "columns" => ("columns", "колонок"),
        "lost_on_reload" => (
            "The page was left while a file was being ingested, so it is not in bronze; drop it again:",
            "Страницу покинули во время загрузки файла, поэтому его нет в bronze; перетащите его снова:",
        ),
        "drop_on_bronze" => (
            "Drop files on a bronze table card (bronze.…) to append them as a new batch.",
            "Перетащите файл на карточку bronze-таблицы (bronze.…), чтобы добавить его новым батчем.",
        ),
        "not_refreshed_card" => ("this table was not refreshed by the last run (it or a table it reads failed): its last good version", "таблица не обновлена последним запуском (упала она или таблица, которую она читает): показана последняя успешная версия"),
        "has_error" => ("error in the model: the count is from the last good run", "ошибка в модели: число из последнего успешного запуска"),
        "delete_rule" => ("Delete this rule", "Удалить правило"),
        "add_rule" => ("Add a rule (starts switched off):", "Добавить правило (сначала выключено):"),
        "new_rationale" => ("Why does this rule exist? Write it down for the next reader.", "Зачем это правило? Запишите для следующего читателя."),
        "version" => ("Version", "Версия"),
        "current" => ("current", "текущая"),
        "expired" => ("expired", "удалена"),
        "history" => ("History", "История"),
        "time" => ("time", "время"),
        "operation" => ("operation", "операция"),
        "what" => ("what", "что"),
        "travel_reading" => ("Time travel: reading version", "Time travel: читаем версию"),
        "travel_current" => ("; the current one is", "; текущая —"),
        "back_to_current" => ("Back to current", "К текущей"),
        "saving_version" => ("these rows are being written as a new version…", "эти строки записываются как новая версия…"),
        "restore" => ("Restore version", "Восстановить версию"),
        "bronze_no_restore" => ("bronze is append-only: it can be read as it was, never rolled back", "bronze только дописывается: её можно прочитать как было, но не откатить"),
        "corrupt" => ("corrupt", "битых"),
        "size" => ("bytes", "байт"),
        "kept_aside" => ("kept aside", "отложено"),
        "read_again" => ("Read again…", "Прочитать заново…"),
        "superseded_by" => ("read again: silver reads batch", "прочитан заново: silver читает батч"),
        "read_again_title" => ("Read again:", "Прочитать заново:"),
        "read_again_hint" => (
            "The file as it arrived is kept in the landing zone. Reading it with other settings appends a new batch; the first batch stays (bronze is append-only).",
            "Файл хранится в landing zone как пришёл. Чтение с другими настройками добавит новый батч; первый останется (bronze только дописывается).",
        ),
        "detect" => ("detect", "определить"),
        "delimiter" => ("delimiter", "разделитель"),
        "header_row" => ("header line", "строка заголовка"),
        "yes" => ("yes", "да"),
        "no" => ("no", "нет"),
        "skip_rows" => ("lines before the header", "строк до заголовка"),
        "decimal_sep" => ("decimal separator", "десятичный разделитель"),
        "null_tokens" => ("read as NULL", "читать как NULL"),
        "encoding" => ("encoding", "кодировка"),
        "ingest_new_batch" => ("Ingest as a new batch", "Загрузить новым батчем"),
        "only_corrupt" => ("only corrupt records", "только битые записи"),
        "runs" => ("Runs:", "Запуски:"),
        "mode_full" => ("full refresh on every change", "полный пересчёт при каждом изменении"),
        "mode_incremental" => ("incremental: batches past the watermark", "инкрементально: батчи после watermark"),
        "run_now" => ("Run now", "Запустить"),
        "full_refresh" => ("Full refresh", "Полный пересчёт"),
        "replay" => ("Replay from bronze", "Replay из bronze"),
        "replay_identical" => ("silver and gold rebuilt from bronze: identical", "silver и gold пересобраны из bronze: совпадают"),
        "replay_differs" => ("silver and gold rebuilt from bronze differ:", "silver и gold, пересобранные из bronze, отличаются:"),
        "replay_failed" => ("replay failed", "replay не удался"),
        "replay_stale" => ("before the last change:", "до последнего изменения:"),
        "replay_stale_hint" => ("The tables changed after this replay: press Replay from bronze again to compare them now.", "Таблицы изменились после этого replay: нажмите «Replay из bronze» ещё раз, чтобы сравнить их сейчас."),
        "only_current" => ("only in the current table", "только в текущей таблице"),
        "only_replayed" => ("only in the rebuild", "только в пересборке"),
        "watermark" => ("watermark", "watermark"),
        "watermark_hint" => (
            "meta.bronze_checkpoints: a run saves the largest _ingest_ts it processed, only after it succeeds. An incremental run reads only batches after it.",
            "meta.bronze_checkpoints: запуск сохраняет наибольший обработанный _ingest_ts только после успеха. Инкрементальный запуск читает только батчи после него.",
        ),
        "end_offset" => ("end offset", "конец лога"),
        "committed" => ("committed", "закоммичено"),
        "kafka_hint" => (
            "One JSON message per line (null = tombstone). Produce appends to the topic; Poll writes a micro-batch to bronze and commits the offset; a crash before the commit makes the next poll deliver the same messages again.",
            "Одно JSON-сообщение на строку (null — tombstone). Produce дописывает в топик; Poll пишет микробатч в bronze и коммитит offset; падение до коммита — и следующий poll доставит те же сообщения снова.",
        ),
        "produce" => ("Produce", "Отправить (produce)"),
        "poll" => ("Poll", "Прочитать (poll)"),
        "poll_crash" => ("Poll, crash before commit", "Прочитать и упасть до коммита"),
        "lag" => ("lag", "отставание"),
        "erased_waiting" => ("of them erased", "из них удалено"),
        "erased_waiting_hint" => (
            "Erased by a right-to-be-forgotten request: a poll skips them and commits their offsets; nothing of them reaches bronze",
            "Удалены по праву на забвение: чтение пропустит их и закоммитит их смещения; в bronze они не попадут",
        ),
        "cp_bronze_table" => ("bronze table", "таблица bronze"),
        "cp_last_ingest_ts" => ("last _ingest_ts read", "последний прочитанный _ingest_ts"),
        "cp_mode" => ("mode", "режим"),
        "cp_new_batches" => ("new batches", "новых батчей"),
        "cp_new_rows" => ("new rows", "новых строк"),
        "cp_new_hint" => (
            "Batches and rows that arrived past the previous watermark (a full refresh reads every row, the watermark still moves by these)",
            "Батчи и строки, пришедшие после прошлого watermark (полный пересчёт читает все строки, но watermark сдвигается на эти)",
        ),
        "event" => ("event", "событие"),
        "step_passed" => ("passed", "пройдено"),
        "step_failed" => ("failed", "не прошло"),
        "step_unchanged" => ("unchanged", "без изменений"),
        "step_as" => ("as", "как"),
        "cp_full" => ("full", "полный"),
        "cp_incremental" => ("incremental", "инкрементальный"),
        "run_word" => ("run", "запуск"),
        "tab" => ("tab", "табуляция"),
        "typed" => ("typed", "типизированно"),
        "json_lines" => ("JSON Lines", "JSON Lines (объект на строку)"),
        "json_array" => ("JSON array", "JSON-массив"),
        "json_pretty" => ("JSON (pretty-printed)", "JSON (многострочный)"),
        "restored" => ("restored as a new version", "восстановлена новой версией"),
        "produced" => ("messages produced to the topic", "отправлено сообщений в топик"),
        "read_again_ok" => ("read again, appended as a new batch", "прочитан заново и добавлен новым батчем"),
        "confirm_reload" => (
            "This reloads the example: your batches, rule edits and history are discarded. Go on?",
            "Пример загрузится заново: ваши батчи, правки правил и история пропадут. Продолжить?",
        ),
        "quote" => ("quote", "кавычка"),
        "flagged" => ("records flagged in _corrupt_reason", "записей помечено в _corrupt_reason"),
        "header_line" => ("header line", "строка заголовка"),
        "no_header" => ("no header", "без заголовка"),
        "bronze_mode" => ("stored as", "хранение"),
        "bronze_mode_hint" => (
            "Raw keeps each record's text in raw_payload (robust to schema drift). Typed applies the declared schema at ingest. Changing it reloads the example.",
            "Raw хранит текст записи в raw_payload (устойчиво к дрейфу схемы). Typed применяет объявленную схему при загрузке. Смена перезагружает пример.",
        ),
        "mode_raw" => ("raw (raw_payload)", "raw (raw_payload)"),
        "mode_permissive" => ("typed, PERMISSIVE (_corrupt_record)", "typed, PERMISSIVE (_corrupt_record)"),
        "mode_failfast" => ("typed, FAILFAST", "typed, FAILFAST"),
        "mode_dropmalformed" => ("typed, DROPMALFORMED (anti-pattern)", "typed, DROPMALFORMED (анти-паттерн)"),
        "dropped" => ("dropped", "выброшено"),
        "forget" => ("Right to be forgotten…", "Право на забвение…"),
        "forget_hint" => (
            "The one way to delete from bronze, for a legal request: rows matching the condition leave every bronze version, their landed files are deleted, silver and gold are rebuilt and their older snapshots expire. Logged with the reason.",
            "Единственный способ удалить из bronze — по требованию закона: строки по условию исчезают из всех версий bronze, исходные файлы удаляются, silver и gold пересобираются, их старые снимки удаляются. Записывается в журнал с причиной.",
        ),
        "forget_reason" => ("reason (request id, law)", "причина (номер запроса, закон)"),
        "forget_button" => ("Erase for good", "Удалить навсегда"),
        "forget_plan_button" => ("Show what would be erased", "Показать, что будет удалено"),
        "forget_plan_head" => ("The condition matches", "Совпадений с условием:"),
        "forget_plan_messages" => ("message(s) still in the Kafka topic", "сообщ. ещё в топике Kafka"),
        "forget_plan_files" => ("landed file(s) deleted", "файл(ов) в landing удаляются"),
        "forget_plan_leave" => ("leave", "уходят"),
        "forget_plan_appear" => ("appear", "появляются"),
        "forget_plan_sample" => ("sample of the rows", "пример строк"),
        "forget_plan_rebuild_error" => ("silver and gold could not be rebuilt for the plan", "для плана не удалось пересобрать silver и gold"),
        "forget_plan_final" => (
            "Nothing has changed yet. Erasing removes these bronze records from every version, deletes their landed files, rebuilds silver and gold (full refresh) and expires their older snapshots. It cannot be undone.",
            "Пока ничего не изменено. Удаление убирает эти записи bronze из всех версий, удаляет их файлы в landing, пересобирает silver и gold (full refresh) и удаляет их старые снимки. Отменить нельзя.",
        ),
        "forget_reason_needed" => ("write the reason (the request it answers) first", "сначала укажите причину (номер запроса)"),
        "cancel" => ("Cancel", "Отмена"),
        "table" => ("table", "таблица"),
        "escape" => ("escape", "экранирование"),
        "escape_none" => ("none (quotes doubled: \"\")", "нет (кавычки удваиваются: \"\")"),
        "header_renames" => ("header names renamed so no column is lost", "имена в заголовке переименованы, чтобы не потерять столбцы"),
        "warned_records" => ("with a warning", "с предупреждением"),
        "explode_label" => ("one row per element", "строка на элемент"),
        "explode_hint" => (
            "a child table: one row per element of the array in each bronze record; position counts from 0 (as Spark's posexplode); each row keeps its parent record's lineage (_event_id)",
            "дочерняя таблица: строка на каждый элемент массива в записи bronze; position считается с 0 (как posexplode в Spark); у строки — lineage родительской записи (_event_id)",
        ),
        "explode_counts" => ("records →", "записей →"),
        "explode_elements" => ("elements", "элементов"),
        "explode_without" => ("without elements", "без элементов"),
        "explode_unreadable" => ("unreadable", "нечитаемых"),
        "warned_hint" => (
            "records read all the same, with a note in _warning (e.g. a JSON object with a duplicate key: the last value is read)",
            "записи читаются, но с пометкой в _warning (например, JSON-объект с повторяющимся ключом: берётся последнее значение)",
        ),
        "read_as_utc" => ("values had no offset: read as UTC", "значений без смещения: прочитаны как UTC"),
        "read_as_utc_hint" => (
            "TIMESTAMP values without an offset (+03:00, Z) are taken as UTC. If they are local times, declare the column's time_zone (an IANA name such as Europe/Moscow).",
            "Значения TIMESTAMP без смещения (+03:00, Z) считаются UTC. Если это местное время, задайте столбцу time_zone (имя IANA, например Europe/Moscow).",
        ),
        "snapshot_hint" => (
            "each snapshot is the full table: a key missing from a newer snapshot was deleted (APPLY CHANGES FROM SNAPSHOT)",
            "каждый снимок — вся таблица: ключ, которого нет в более новом снимке, удалён (APPLY CHANGES FROM SNAPSHOT)",
        ),
        "forget_condition" => ("condition", "условие"),
        "forgotten" => ("rows erased (right to be forgotten)", "удалено строк (право на забвение)"),
        "pii_title" => ("PII in an immutable bronze: the right to be forgotten three ways", "PII в иммутабельном bronze: право на забвение тремя способами"),
        "pii_intro" => (
            "A customer asks to be forgotten (GDPR art. 17, 152-FZ), and bronze is append-only. The same orders, with names, emails and phones, run through three lakes of their own (never saved, not your session): pick a customer, forget them, and see what each way leaves in bronze, in time travel and in a replay (seed 000 §7).",
            "Клиент просит его забыть (GDPR ст. 17, ФЗ-152), а bronze — только для добавления. Одни и те же заказы с именами, email и телефонами проходят через три отдельных озера (они не сохраняются и не относятся к вашей сессии): выберите клиента, забудьте его и посмотрите, что каждый способ оставляет в bronze, в time travel и в replay (seed 000 §7).",
        ),
        "pii_loading" => ("Building the three lakes…", "Строим три озера…"),
        "pii_customer" => ("Customer ", "Клиент "),
        "pii_orders" => ("orders", "заказов"),
        "pii_forget_all" => ("Forget in all three:", "Забыть во всех трёх:"),
        "pii_forget_one" => ("Forget", "Забыть"),
        "pii_reset" => ("Reset the three lakes", "Сбросить три озера"),
        "pii_reset_hint" => ("Build the three lakes again from the orders: every customer back", "Построить три озера заново из заказов: все клиенты возвращаются"),
        "pii_token" => ("1. Tokenization before bronze", "1. Токенизация до bronze"),
        "pii_token_rank" => ("best", "лучший"),
        "pii_token_hint" => (
            "The stream replaces name, email and phone with tokens before bronze; the vault, outside the lake, maps tokens to values. Forget = delete the customer's vault entries.",
            "Поток заменяет имя, email и телефон токенами ещё до bronze; vault вне озера сопоставляет токены со значениями. Забыть = удалить записи клиента из vault.",
        ),
        "pii_shred" => ("2. Crypto-shredding", "2. Crypto-shredding"),
        "pii_shred_rank" => ("good", "хороший"),
        "pii_shred_hint" => (
            "Each customer's personal data is encrypted with their own AES-256-GCM key; the key store, outside the lake, holds the keys. Forget = delete the key: no bronze rewrite.",
            "Персональные данные каждого клиента шифруются его собственным ключом AES-256-GCM; ключи лежат в хранилище ключей вне озера. Забыть = удалить ключ: bronze не переписывается.",
        ),
        "pii_delete" => ("3. DELETE + expiry", "3. DELETE + expiry"),
        "pii_delete_rank" => ("last resort", "крайняя мера"),
        "pii_delete_hint" => (
            "Bronze holds the values as they came. Forget = a logged DELETE of the customer's rows from every version, the landed files deleted, older silver and gold snapshots expired (Iceberg's DELETE + expire_snapshots).",
            "Bronze хранит значения как они пришли. Забыть = DELETE строк клиента из всех версий с записью в журнал, удаление файлов из landing zone, истечение старых снапшотов silver и gold (DELETE + expire_snapshots в Iceberg).",
        ),
        "pii_bronze_rows" => ("bronze rows", "строк в bronze"),
        "pii_customer_rows" => ("the customer's rows", "строк клиента"),
        "pii_bronze_version" => ("bronze version", "версия bronze"),
        "pii_rewritten" => ("bronze rewritten", "bronze переписан"),
        "pii_readable_cells" => ("personal cells readable", "читаемых персональных ячеек"),
        "pii_vault_entries" => ("vault entries", "записей в vault"),
        "pii_key" => ("key in the key store", "ключ в хранилище ключей"),
        "pii_expired" => ("silver / gold snapshots expired", "истекших снапшотов silver / gold"),
        "pii_landed" => ("landed files with the customer", "файлов landing zone с клиентом"),
        "pii_replay_revenue" => ("Σ revenue after a replay", "Σ выручки после replay"),
        "pii_yes" => ("yes", "да"),
        "pii_no" => ("no", "нет"),
        "pii_bronze_now" => ("What bronze holds now (stored / read)", "Что сейчас в bronze (хранится / читается)"),
        "pii_bronze_before" => ("What bronze held before", "Что было в bronze до"),
        "pii_time_travel" => ("Time travel to", "Time travel к"),
        "pii_replay" => ("Replay from bronze", "Replay из bronze"),
        "pii_no_rows" => ("(no rows of this customer)", "(строк этого клиента нет)"),
        "pii_unreadable" => ("unreadable", "не читается"),
        "remember_options" => ("use these settings for the next files of this table", "применять эти настройки к следующим файлам этой таблицы"),
        _ => return "?",
    };
    match lang {
        Lang::En => en,
        Lang::Ru => ru,
    }
}

/// Texts of the page's own that messages (banners) are made of.
const MESSAGE_KEYS: &[&str] = &[
    "refused_restoring",
    "refused_read_only",
    "drop_on_bronze",
    "lost_on_reload",
    "restore_problem",
    "ingest_ok",
    "flagged",
    "forgotten",
    "produced",
    "read_again_ok",
    "restored",
    "cancelled",
];

/// `text` (a message shown in `from`) with the page's own texts in it said
/// in `to`, for a language switch; what the engine wrote stays as written.
pub fn retranslate(text: &str, from: Lang, to: Lang) -> String {
    let mut out = text.to_string();
    if from != to {
        for key in MESSAGE_KEYS {
            out = out.replace(t(from, key), t(to, key));
        }
    }
    out
}

/// What a request (other than an ingest, which its file names) is, for a
/// message about it, e.g. "the rule edit of silver.orders"; `None` for the
/// ones a learner does not make (snapshots, table pages).
pub fn request_label(lang: Lang, r: &medallion_protocol::Request) -> Option<String> {
    use medallion_protocol::Request as R;
    let ru = lang == Lang::Ru;
    Some(match r {
        R::SetRules { silver_table, .. } => {
            let table = medallion_protocol::TableName::silver(
                medallion_protocol::Layer::Silver.unqualified(silver_table),
            );
            if ru {
                format!("Правка правил {table}")
            } else {
                format!("The rule edit of {table}")
            }
        }
        R::SetGoldSql { model, .. } => {
            let table = medallion_protocol::TableName::gold(model);
            if ru {
                format!("Правка SQL {table}")
            } else {
                format!("The SQL edit of {table}")
            }
        }
        R::Restore { table, version } => {
            if ru {
                format!("Восстановление {table} до версии {version}")
            } else {
                format!("The restore of {table} to version {version}")
            }
        }
        R::Run { .. } => (if ru { "Запуск" } else { "The run" }).to_string(),
        R::Replay => (if ru { "Replay" } else { "The replay" }).to_string(),
        R::SetRunMode { .. } => (if ru {
            "Смена режима запуска"
        } else {
            "The change of run mode"
        })
        .to_string(),
        R::Reingest { .. } => (if ru {
            "Повторное чтение файла"
        } else {
            "Reading a file again"
        })
        .to_string(),
        R::KafkaProduce { .. } => (if ru {
            "Отправка сообщений Kafka"
        } else {
            "Producing Kafka messages"
        })
        .to_string(),
        R::KafkaPoll { .. } => (if ru {
            "Чтение из Kafka"
        } else {
            "The Kafka poll"
        })
        .to_string(),
        R::Forget { .. } => (if ru {
            "Удаление по праву на забвение"
        } else {
            "The right-to-be-forgotten erasure"
        })
        .to_string(),
        R::SetAntiPatterns { .. } => (if ru {
            "Переключение антипаттерна"
        } else {
            "The anti-pattern switch"
        })
        .to_string(),
        R::SetLab { .. } => (if ru {
            "Переключение лаборатории антипаттернов"
        } else {
            "The lab's anti-pattern switch"
        })
        .to_string(),
        R::LabEvent { .. } => (if ru {
            "Событие лаборатории"
        } else {
            "The lab's event"
        })
        .to_string(),
        R::LoadExample { .. } | R::LoadPipeline { .. } => (if ru {
            "Загрузка сценария"
        } else {
            "Loading the scenario"
        })
        .to_string(),
        _ => return None,
    })
}

/// "checkpoint(s)" with the right plural form.
pub fn checkpoints_word(lang: Lang, n: usize) -> &'static str {
    match lang {
        Lang::En if n == 1 => "checkpoint",
        Lang::En => "checkpoints",
        Lang::Ru => match (n % 10, n % 100) {
            (1, r) if r != 11 => "чекпойнт",
            (2..=4, r) if !(12..=14).contains(&r) => "чекпойнта",
            _ => "чекпойнтов",
        },
    }
}

/// "1 row" / "5 rows"; "1 строка" / "3 строки" / "5 строк".
pub fn rows_word(lang: Lang, n: usize) -> &'static str {
    match lang {
        Lang::En => {
            if n == 1 {
                "row"
            } else {
                "rows"
            }
        }
        Lang::Ru => match (n % 10, n % 100) {
            (1, r) if r != 11 => "строка",
            (2..=4, r) if !(12..=14).contains(&r) => "строки",
            _ => "строк",
        },
    }
}

/// `2026-11-29 21:03:04 UTC` from microseconds since the Unix epoch.
pub fn fmt_ts(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(secs as f64 * 1000.0));
    d.to_iso_string()
        .as_string()
        .unwrap_or_default()
        .replace('T', " ")
        .trim_end_matches(".000Z")
        .to_string()
        + " UTC"
}
